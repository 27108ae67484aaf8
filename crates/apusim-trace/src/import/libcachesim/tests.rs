//! Tests of the libCacheSim importers: hand-built binary records, truncation, zstd, the
//! object-to-block mapping, the text forms' columns and errors, and the parameter string.

use super::*;
use crate::{collect, Access, Op};

fn opts(params: &str) -> ImportOptions {
    ImportOptions {
        libcachesim: params.parse().unwrap(),
        ..ImportOptions::default()
    }
}

fn rec(id: u64, size: u32) -> OracleGeneralRecord {
    OracleGeneralRecord {
        clock_time: 7,
        obj_id: id,
        obj_size: size,
        next_access_vtime: -1,
    }
}

fn bytes(recs: &[OracleGeneralRecord]) -> Vec<u8> {
    recs.iter().flat_map(|r| r.encode()).collect()
}

fn read_og(data: Vec<u8>, params: &str) -> Result<Vec<Access>> {
    let mut s =
        OracleGeneralSource::new(std::io::Cursor::new(data), "t.oracleGeneral", &opts(params))?;
    collect(&mut s)
}

fn read_csv(text: &str, params: &str) -> Result<Vec<Access>> {
    let mut s = LcsTextSource::new(
        std::io::Cursor::new(text.as_bytes().to_vec()),
        "t.csv",
        TextKind::Csv,
        &opts(params),
    )?;
    collect(&mut s)
}

fn addrs(v: &[Access]) -> Vec<u64> {
    v.iter().map(|a| a.addr).collect()
}

#[test]
fn decodes_hand_built_record() {
    let mut b = [0u8; 24];
    b[0..4].copy_from_slice(&[0x01, 0x02, 0x03, 0x04]);
    b[4..12].copy_from_slice(&[0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]);
    b[12..16].copy_from_slice(&[0x00, 0x10, 0x00, 0x00]);
    b[16..24].copy_from_slice(&[0xff; 8]);
    let r = OracleGeneralRecord::decode(&b);
    assert_eq!(
        r,
        OracleGeneralRecord {
            clock_time: 0x0403_0201,
            obj_id: 0x1122_3344_5566_7788,
            obj_size: 4096,
            next_access_vtime: -1,
        }
    );
    assert_eq!(r.encode(), b);
}

fn read_opns(data: Vec<u8>, params: &str) -> Result<Vec<Access>> {
    let mut s = OracleGeneralSource::with_layout(
        std::io::Cursor::new(data),
        "t.oracleGeneralOpNS",
        OracleLayout::OpNS,
        &opts(params),
    )?;
    collect(&mut s)
}

/// Three records laid out by hand from libCacheSim's reader (`oracleGeneralBin.h`:
/// time at 0, id at 4, size at 12, op at 16, ns at 17, next access at 19), not by
/// [`OracleGeneralOpNSRecord::encode`].
fn hand_opns() -> Vec<u8> {
    let mut data = Vec::new();
    for (time, id, size, op, ns, next) in [
        (10u32, 0x0102_0304_0506u64, 4096u32, 12u8, 7u16, 2i64), // read
        (11, 5, 100, 13, 0xbeef, -1),                            // write
        (12, 0x0102_0304_0506, 1, 1, 7, -1),                     // get
        (13, 9, 0, 9, 0, -1),                                    // size 0: skipped, op unread
        (14, 6, 8, 3, 1, -1),                                    // set
    ] {
        let mut r = Vec::with_capacity(27);
        r.extend_from_slice(&time.to_le_bytes());
        r.extend_from_slice(&id.to_le_bytes());
        r.extend_from_slice(&size.to_le_bytes());
        r.push(op);
        r.extend_from_slice(&ns.to_le_bytes());
        r.extend_from_slice(&next.to_le_bytes());
        assert_eq!(r.len(), 27);
        data.extend_from_slice(&r);
    }
    data
}

#[test]
fn opns_hand_built_records_decode_exactly() {
    let data = hand_opns();
    let mut first = [0u8; OPNS_RECORD_BYTES];
    first.copy_from_slice(&data[..27]);
    let r = OracleGeneralOpNSRecord::decode(&first);
    assert_eq!(
        r,
        OracleGeneralOpNSRecord {
            clock_time: 10,
            obj_id: 0x0102_0304_0506,
            obj_size: 4096,
            op: 12,
            ns: 7,
            next_access_vtime: 2,
        }
    );
    assert_eq!(r.encode(), first);
    let mut second = [0u8; OPNS_RECORD_BYTES];
    second.copy_from_slice(&data[27..54]);
    let r = OracleGeneralOpNSRecord::decode(&second);
    assert_eq!(
        (r.obj_id, r.op, r.ns, r.next_access_vtime),
        (5, 13, 0xbeef, -1)
    );
    let v = read_opns(data, "").unwrap();
    assert_eq!(
        addrs(&v),
        vec![0x0102_0304_0506 * 64, 5 * 64, 0x0102_0304_0506 * 64, 6 * 64]
    );
    assert_eq!(
        v.iter().map(|a| a.op).collect::<Vec<_>>(),
        vec![Op::Read, Op::Write, Op::Read, Op::Write]
    );
    assert_eq!(
        v.iter().map(|a| a.time).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert!(v.iter().all(|a| a.size == 64));
}

#[test]
fn opns_sizes_map_as_oracle_general() {
    let v = read_opns(hand_opns(), "ignore-obj-size=false,max-obj-size=4096").unwrap();
    // 4096 bytes: 64 blocks of object 0x0102_0304_0506's 4 KiB slot; then 2, 1, 1 blocks.
    assert_eq!(v.len(), 64 + 2 + 1 + 1);
    assert_eq!(v[63].addr, (0x0102_0304_0506 << 12) + 63 * 64);
    assert!(v[..64].iter().all(|a| a.op == Op::Read && a.time == 0));
    assert!(v[64..66].iter().all(|a| a.op == Op::Write && a.time == 1));
}

#[test]
fn opns_truncated_record_names_its_offset() {
    let mut data = hand_opns();
    data.truncate(27 * 3 + 20);
    let e = read_opns(data.clone(), "").unwrap_err();
    match &e {
        TraceError::Format { offset, msg, .. } => {
            assert_eq!(*offset, 81);
            assert!(
                msg.contains("oracleGeneralOpNS") && msg.contains("20 bytes into a 27-byte"),
                "{msg}"
            );
        }
        other => panic!("expected a format error, got {other}"),
    }
    assert!(e.to_string().contains("t.oracleGeneralOpNS"), "{e}");
    // Compressed: the offset is in the decompressed stream, and says so.
    let z = zstd::encode_all(&data[..], 3).unwrap();
    let e = read_opns(z, "").unwrap_err().to_string();
    assert!(
        e.contains("byte offset 81") && e.contains("decompressed"),
        "{e}"
    );
}

#[test]
fn opns_is_detected_by_name_as_libcachesim_does() {
    use crate::import::Format;
    let detect = |name: &str| Format::detect_bytes(&[0, 1, 2], Path::new(name));
    for n in [
        "msr_hm_0.oracleGeneralOpNS",
        "msr_hm_0.oracleGeneralOpNS.zst",
        "a/b.oraclegeneralopns.bin",
    ] {
        assert_eq!(detect(n), Format::OracleGeneralOpNS, "{n}");
    }
    for n in [
        "w.oracleGeneral",
        "w.oracleGeneral.zst",
        "w.oracleGeneralBin",
    ] {
        assert_eq!(detect(n), Format::OracleGeneral, "{n}");
    }
    assert_eq!("oracleGeneralOpNS".parse(), Ok(Format::OracleGeneralOpNS));
    assert_eq!(Format::OracleGeneralOpNS.to_string(), "oracleGeneralOpNS");
}

#[test]
fn opns_ops_follow_libcachesim_enum() {
    assert_eq!(lcs_op(0), Ok(Op::Read));
    for c in [1, 2, 12] {
        assert_eq!(lcs_op(c), Ok(Op::Read), "{c}");
    }
    for c in [3, 4, 5, 6, 7, 8, 10, 11, 13, 14] {
        assert_eq!(lcs_op(c), Ok(Op::Write), "{c}");
    }
    assert!(lcs_op(9).unwrap_err().contains("delete"));
    for c in [15, 16, 255] {
        assert!(lcs_op(c).unwrap_err().contains(&format!("op {c}")), "{c}");
    }
    // A delete in the trace is refused at its record's offset.
    let rec = OracleGeneralOpNSRecord {
        clock_time: 0,
        obj_id: 1,
        obj_size: 1,
        op: 1,
        ns: 0,
        next_access_vtime: -1,
    };
    let mut data = rec.encode().to_vec();
    data.extend_from_slice(&OracleGeneralOpNSRecord { op: 9, ..rec }.encode());
    let e = read_opns(data, "").unwrap_err().to_string();
    assert!(e.contains("byte offset 27") && e.contains("delete"), "{e}");
}

#[test]
fn one_block_per_object_by_default() {
    let v = read_og(bytes(&[rec(3, 100), rec(0, 1), rec(3, 5000)]), "").unwrap();
    assert_eq!(addrs(&v), vec![3 * 64, 0, 3 * 64]);
    assert!(v.iter().all(|a| a.op == Op::Read && a.size == 64));
    assert_eq!(v.iter().map(|a| a.time).collect::<Vec<_>>(), vec![0, 1, 2]);
}

#[test]
fn zero_size_requests_are_skipped() {
    let v = read_og(bytes(&[rec(1, 0), rec(2, 8), rec(1, 0)]), "").unwrap();
    assert_eq!(addrs(&v), vec![2 * 64]);
    assert_eq!(v[0].time, 0);
}

#[test]
fn truncated_record_names_its_offset() {
    let mut data = bytes(&[rec(1, 1), rec(2, 1)]);
    data.extend_from_slice(&[1, 2, 3, 4, 5]);
    let e = read_og(data, "").unwrap_err();
    match &e {
        TraceError::Format { offset, msg, .. } => {
            assert_eq!(*offset, 48);
            assert!(msg.contains("5 bytes into a 24-byte record"), "{msg}");
        }
        other => panic!("expected a format error, got {other}"),
    }
    assert!(e.to_string().contains("t.oracleGeneral"), "{e}");
}

#[test]
fn id_above_the_shift_limit_is_refused_not_wrapped() {
    let limit = (1u64 << 58) - 1;
    let v = read_og(bytes(&[rec(limit, 1)]), "").unwrap();
    assert_eq!(v[0].addr, limit << 6);
    let e = read_og(bytes(&[rec(1, 1), rec(1 << 58, 1)]), "").unwrap_err();
    match &e {
        TraceError::Format { offset, msg, .. } => {
            assert_eq!(*offset, 24);
            assert!(msg.contains("object id 288230376151711744"), "{msg}");
            assert!(msg.contains("dense-ids=true"), "{msg}");
        }
        other => panic!("expected a format error, got {other}"),
    }
    // Dense numbering takes any id.
    let v = read_og(
        bytes(&[rec(u64::MAX, 1), rec(1 << 60, 1), rec(u64::MAX, 1)]),
        "dense-ids=true",
    )
    .unwrap();
    assert_eq!(addrs(&v), vec![0, 64, 0]);
}

#[test]
fn sized_objects_cover_consecutive_blocks() {
    let v = read_og(
        bytes(&[rec(2, 130), rec(1, 64), rec(2, 1)]),
        "ignore-obj-size=false,max-obj-size=1000",
    )
    .unwrap();
    // Slot: 1000 rounded up to 1024 bytes.
    assert_eq!(addrs(&v), vec![2048, 2048 + 64, 2048 + 128, 1024, 2048]);
    assert_eq!(
        v.iter().map(|a| a.time).collect::<Vec<_>>(),
        vec![0, 0, 0, 1, 2]
    );
    let e = read_og(
        bytes(&[rec(2, 130), rec(9, 1001)]),
        "ignore-obj-size=false,max-obj-size=1000",
    )
    .unwrap_err();
    let s = e.to_string();
    assert!(
        s.contains("byte offset 24") && s.contains("object 9 has 1001 bytes"),
        "{s}"
    );
}

#[test]
fn large_objects_span_batches() {
    let v = read_og(
        bytes(&[rec(1, 10_000 * 64), rec(2, 1)]),
        "ignore-obj-size=false,max-obj-size=1048576",
    )
    .unwrap();
    assert_eq!(v.len(), 10_001);
    assert_eq!(v[9_999].addr, (1 << 20) + 9_999 * 64);
    assert_eq!(v[10_000].addr, 2 << 20);
}

#[test]
fn zstd_round_trip() {
    let recs: Vec<_> = (0..10_000u64).map(|i| rec(i % 777, 1 + i as u32)).collect();
    let raw = bytes(&recs);
    let z = zstd::encode_all(&raw[..], 3).unwrap();
    assert!(z.len() < raw.len());
    let a = read_og(raw, "").unwrap();
    let b = read_og(z.clone(), "").unwrap();
    assert_eq!(a.len(), 10_000);
    assert_eq!(a, b);
    // Two concatenated frames read as one stream.
    let mut two = z.clone();
    two.extend_from_slice(&z);
    assert_eq!(read_og(two, "").unwrap().len(), 20_000);
    // A truncated compressed stream is an error, not a panic or a silent end.
    assert!(read_og(z[..z.len() - 7].to_vec(), "").is_err());
}

#[test]
fn csv_columns_are_selected() {
    let text = "timestamp,key,size,op\n\
                1.5,0x10,100,get\n\
                2,17,0,get\n\
                3,010,64,set\n";
    let v = read_csv(text, "time-col=1,obj-id-col=2,obj-size-col=3,op-col=4").unwrap();
    // Header skipped; size-0 request skipped; 010 is octal 8.
    assert_eq!(addrs(&v), vec![16 * 64, 8 * 64]);
    assert_eq!(v[0].op, Op::Read);
    assert_eq!(v[1].op, Op::Write);
    // Other order, tab delimiter guessed, no header.
    let v = read_csv("9\t5\n9\t6\n", "obj-id-col=2").unwrap();
    assert_eq!(addrs(&v), vec![5 * 64, 6 * 64]);
    let v = read_csv("a|b|7\n", "obj-id-col=3,delimiter=|,has-header=false").unwrap();
    assert_eq!(addrs(&v), vec![7 * 64]);
}

#[test]
fn csv_string_ids_are_numbered_in_order() {
    let v = read_csv(
        "\"alpha\",1\nbeta,1\nalpha,1\n",
        "obj-id-col=1,obj-id-is-num=false,has-header=false",
    )
    .unwrap();
    assert_eq!(addrs(&v), vec![0, 64, 0]);
}

#[test]
fn csv_errors_name_the_line() {
    let e = read_csv("1,2\n3,x\n", "obj-id-col=2,has-header=false").unwrap_err();
    let s = e.to_string();
    assert!(
        s.contains("t.csv:2:") && s.contains("obj-id-is-num=false"),
        "{s}"
    );
    let e = read_csv("1,2\n3\n", "obj-id-col=2").unwrap_err();
    assert!(
        e.to_string()
            .contains("obj-id-col=2 but the line has 1 field"),
        "{e}"
    );
    let e = read_csv("1,2,-4\n", "obj-id-col=2,obj-size-col=3").unwrap_err();
    assert!(e.to_string().contains("object size"), "{e}");
    let e = read_csv("1,2,delete\n", "obj-id-col=2,op-col=3").unwrap_err();
    assert!(e.to_string().contains("delete"), "{e}");
    assert!(read_csv("1,2\n", "time-col=1").is_err());
}

#[test]
fn txt_reads_one_id_per_line() {
    let mut s = LcsTextSource::new(
        std::io::Cursor::new(b"5\n\n0x6\n5\r\n".to_vec()),
        "t.txt",
        TextKind::Txt,
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(
        addrs(&collect(&mut s).unwrap()),
        vec![5 * 64, 6 * 64, 5 * 64]
    );
}

#[test]
fn params_parse_and_refuse() {
    let o: LcsOptions = "time_col=1, obj-id-field=2,size-col=3,delimiter=,,header=yes"
        .parse()
        .unwrap();
    assert_eq!(o.time_col, Some(1));
    assert_eq!(o.obj_id_col, Some(2));
    assert_eq!(o.obj_size_col, Some(3));
    assert_eq!(o.delimiter, Some(b','));
    assert_eq!(o.has_header, Some(true));
    assert_eq!(o.to_string().parse::<LcsOptions>().unwrap(), o);
    let e = "obj-id-colx=2".parse::<LcsOptions>().unwrap_err();
    assert!(
        e.contains("`obj-id-colx`") && e.contains("did you mean `obj-id-col`?"),
        "{e}"
    );
    for bad in [
        "colour=1",
        "obj-id-col=0",
        "obj-id-col=2,time-col=2",
        "block-size=48",
        "block-size=65536",
        "max-obj-size=0",
        "has-header=maybe",
        "obj-id-col",
    ] {
        assert!(bad.parse::<LcsOptions>().is_err(), "{bad}");
    }
    assert_eq!(parse_c_u64("0x1F"), Some(31));
    assert_eq!(parse_c_u64("017"), Some(15));
    assert_eq!(parse_c_u64("0"), Some(0));
    assert_eq!(parse_c_u64("08"), None);
    assert_eq!(parse_c_u64("-1"), None);
    assert_eq!(parse_c_u64("12a"), None);
}
