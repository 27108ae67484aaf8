//! Tests of the spec: grids crossed with points in file order, trace paths relative to the
//! spec, and errors (unknown keys, wrong types, empty grids, missing inputs) with their lines.

use super::*;

fn parse(text: &str) -> Result<Vec<Point>, SpecError> {
    Spec::parse(text, Path::new("/specs/s.toml"))?.points()
}

fn error(text: &str) -> SpecError {
    parse(text).expect_err("the spec should be refused")
}

#[test]
fn grid_crosses_points_in_file_order() {
    let pts = parse(
        "mode = \"functional\"\nlimit = 1000\n[set]\n\"llc.banks\" = 4\n\
         [grid]\npolicy = [\"lru\", \"srrip\"]\n[grid.set]\nllc = [\"4M,16,64\", \"8M,16,64\", \"16M,16,64\"]\n\
         [[point]]\nmix = \"S1\"\n[[point]]\nmix = \"D2\"\nscale = 2\n",
    )
    .unwrap();
    assert_eq!(pts.len(), 2 * 2 * 3);
    assert_eq!(pts[0].policy.as_deref(), Some("lru"));
    assert_eq!(pts[0].set[0].0, "llc");
    assert_eq!(pts[1].set[0].1, toml::Value::String("8M,16,64".into()));
    assert_eq!(pts[3].policy.as_deref(), Some("srrip"));
    assert_eq!(
        pts[6].inputs,
        InputSpec::Mix {
            name: "D2".into(),
            scale: 2,
            frames: apusim_workloads::mixes::Frames::Scale,
        }
    );
    assert_eq!((pts[0].line, pts[6].line), (9, 11));
    assert_eq!(pts[0].limit, Some(1000));
    assert!(pts
        .iter()
        .all(|p| p.set.iter().any(|(k, _)| k == "llc.banks")));
    assert_eq!(pts[0].overrides(), vec!["llc=\"4M,16,64\"", "llc.banks=4"]);
}

#[test]
fn traces_are_relative_to_the_spec() {
    let pts = parse("traces = [\"a.apt\", \"g.apt@gpu\"]\n").unwrap();
    assert_eq!(
        pts[0].inputs,
        InputSpec::Traces(vec!["/specs/a.apt".into(), "/specs/g.apt@gpu".into()])
    );
    let pts = parse("[grid]\ntraces = [[\"a.apt\"], [\"/t/b.apt\"]]\n").unwrap();
    assert_eq!(pts[1].inputs, InputSpec::Traces(vec!["/t/b.apt".into()]));
}

#[test]
fn unknown_keys_name_the_line_and_the_nearest_key() {
    let e = error("mix = \"S1\"\npolcy = \"lru\"\n");
    assert_eq!(e.line, 2);
    assert!(e.message.contains("did you mean `policy`"), "{e}");
    let e = error("mix = \"S1\"\n[grid]\nlimt = [1, 2]\n");
    assert_eq!(e.line, 3);
    assert!(e.message.contains("`limit`"), "{e}");
    let e = error("[[point]]\nmix = \"S1\"\ngrid = 3\n");
    assert_eq!(e.line, 3);
    assert_eq!(e.to_string().split(':').next(), Some("/specs/s.toml"));
}

#[test]
fn wrong_types_empty_grids_and_missing_inputs_are_refused() {
    let e = error("mix = \"S1\"\n\nlimit = \"many\"\n");
    assert_eq!(e.line, 3);
    assert!(e.message.contains("whole number"), "{e}");
    let e = error("mix = 7\n");
    assert!(e.message.contains("string"), "{e}");
    let e = error("mix = \"S1\"\n[grid]\npolicy = []\n");
    assert_eq!(e.line, 3);
    assert!(e.message.contains("empty"), "{e}");
    let e = error("mix = \"S1\"\n[grid]\n");
    assert!(e.message.contains("no axes"), "{e}");
    let e = error("mix = \"S1\"\n[grid]\npolicy = \"lru\"\n");
    assert!(e.message.contains("list"), "{e}");
    let e = error("limit = 5\n");
    assert!(e.message.contains("no inputs"), "{e}");
    let e = error("mix = \"S1\"\nmode = \"timd\"\n");
    assert!(e.message.contains("`timed`"), "{e}");
    assert_eq!(e.line, 2);
    let e = error("mix = \"S1\"\n[grid]\npolicy = [\"lru\", \"lru\"]\n");
    assert!(e.message.contains("twice"), "{e}");
    let e = error("mix = \"S1\"\nlimit = 0\n");
    assert!(e.message.contains("at least 1"), "{e}");
    let e = error("mix = [\n");
    assert!(e.message.contains("TOML"), "{e}");
}

#[test]
fn replay_points_take_a_gpu_workload_and_nothing_of_a_run() {
    let pts = parse(
        "mode = \"replay\"\npreset = \"gspc\"\nscene = \"lake\"\nresolution = \"160x100\"\n\
         consumption = true\n[grid]\npolicy = [\"drrip\", \"gspc\"]\n",
    )
    .unwrap();
    assert_eq!(pts.len(), 2);
    assert_eq!(pts[0].mode, Mode::Replay);
    assert!(pts[0].consumption);
    let pts = parse("mode = \"replay\"\nkernel = \"bfs\"\n").unwrap();
    assert!(!pts[0].consumption);
    let e = error("mode = \"replay\"\nmix = \"S1\"\n");
    assert_eq!(e.line, 2);
    assert!(e.message.contains("`scene` or `kernel`"), "{e}");
    // A recorded LLC stream: one file, no agent.
    let pts = parse("mode = \"replay\"\ntraces = [\"llc.apt\"]\n").unwrap();
    assert_eq!(
        pts[0].inputs,
        InputSpec::Traces(vec!["/specs/llc.apt".into()])
    );
    let e = error("mode = \"replay\"\ntraces = [\"a.apt\", \"b.apt\"]\n");
    assert!(e.message.contains("one recorded LLC stream"), "{e}");
    let e = error("mode = \"replay\"\ntraces = [\"a.apt@gpu\"]\n");
    assert!(e.message.contains("no `@agent`"), "{e}");
    let e = error("mode = \"replay\"\nscene = \"lake\"\n\nlimit = 5\n");
    assert_eq!(e.line, 4);
    assert!(
        e.message.contains("`limit` is not for replay points"),
        "{e}"
    );
    let e = error("mode = \"replay\"\nscene = \"lake\"\nwarmup = 5\n");
    assert!(e.message.contains("`warmup` is not for replay"), "{e}");
    let e = error("scene = \"lake\"\nconsumption = true\n");
    assert_eq!(e.line, 2);
    assert!(e.message.contains("for replay points"), "{e}");
    let e = error("mix = \"S1\"\nmode = \"replya\"\n");
    assert!(e.message.contains("`replay`"), "{e}");
}

#[test]
fn gpu_l1_points_take_a_kernel_or_one_trace_and_a_gpu_configuration() {
    let pts = parse(
        "mode = \"gpu-l1\"\nkernel = \"nw\"\nsize = 64\nseed = 2\n\
         [grid.set]\npredictor = [\"none\", \"pc\"]\n",
    )
    .unwrap();
    assert_eq!(pts.len(), 2);
    assert_eq!(pts[0].mode, Mode::GpuL1);
    assert_eq!(
        pts[0].preset, "table1",
        "the GPU preset of the bypass figures"
    );
    assert_eq!((pts[0].size, pts[0].seed), (Some(64), Some(2)));
    assert_eq!(pts[1].overrides(), vec!["predictor=\"pc\""]);
    let pts = parse("mode = \"gpu-l1\"\ntraces = [\"gpu.csv\"]\n").unwrap();
    assert_eq!(
        pts[0].inputs,
        InputSpec::Traces(vec!["/specs/gpu.csv".into()])
    );
    assert_eq!(pts[0].size, None);
    let e = error("mode = \"gpu-l1\"\nmix = \"S1\"\n");
    assert_eq!(e.line, 2);
    assert!(e.message.contains("GPGPU `kernel`"), "{e}");
    let e = error("mode = \"gpu-l1\"\nscene = \"lake\"\n");
    assert!(e.message.contains("GPGPU `kernel`"), "{e}");
    let e = error("mode = \"gpu-l1\"\ntraces = [\"a.csv\", \"b.csv\"]\n");
    assert!(e.message.contains("one trace"), "{e}");
    for (setting, line) in [
        ("policy = \"lru\"", 3),
        ("scale = 2", 3),
        ("limit = 5", 3),
        ("warmup = 5", 3),
        ("consumption = true", 3),
    ] {
        let e = error(&format!("mode = \"gpu-l1\"\nkernel = \"nw\"\n{setting}\n"));
        assert_eq!(e.line, line, "{setting}: {e}");
        assert!(e.message.contains("is not for gpu-l1 points"), "{e}");
    }
    let e = error("mode = \"gpu-l1\"\ntraces = [\"a.csv\"]\nsize = 64\n");
    assert_eq!(e.line, 3);
    assert!(e.message.contains("generated kernel's"), "{e}");
    let e = error("kernel = \"nw\"\n\nsize = 64\n");
    assert_eq!(e.line, 3);
    assert!(e.message.contains("for gpu-l1 points"), "{e}");
    let e = error("kernel = \"nw\"\nmode = \"gpu-l2\"\n");
    assert!(e.message.contains("`gpu-l1`"), "{e}");
}

#[test]
fn frames_give_a_mix_or_a_scene_its_length() {
    let pts = parse(
        "mix = \"HL7\"\n[grid]\nframes = [3, \"paper\"]\n[[point]]\n[[point]]\nmix = \"S1\"\n",
    )
    .unwrap();
    let frames: Vec<Frames> = pts
        .iter()
        .map(|p| match &p.inputs {
            InputSpec::Mix { frames, .. } => *frames,
            other => panic!("{other:?}"),
        })
        .collect();
    use Frames::{Count, Paper};
    assert_eq!(frames, [Count(3), Paper, Count(3), Paper]);
    let pts = parse("mix = \"S1\"\n").unwrap();
    assert!(matches!(
        pts[0].inputs,
        InputSpec::Mix {
            frames: Frames::Scale,
            ..
        }
    ));
    // A scene's frames: `frames` over `scale`.
    let pts = parse("scene = \"lake\"\nscale = 2\nframes = 5\n[[point]]\n[[point]]\nframes = 1\n")
        .unwrap();
    let scene: Vec<u64> = pts
        .iter()
        .map(|p| match p.inputs {
            InputSpec::Scene { frames, .. } => frames,
            ref other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(scene, [5, 1]);
    // A scene that is not a built-in one is a file, relative to the spec as traces are.
    let pts =
        parse("scene = \"mine/city.toml\"\n[[point]]\n[[point]]\nscene = \"lake\"\n").unwrap();
    let names: Vec<&str> = pts
        .iter()
        .map(|p| match &p.inputs {
            InputSpec::Scene { name, .. } => name.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(names, ["/specs/mine/city.toml", "lake"]);
    for (text, line, says) in [
        ("mix = \"S1\"\nframes = 0\n", 2, "at least 1"),
        ("mix = \"S1\"\nframes = -3\n", 2, "at least 1"),
        ("mix = \"S1\"\n\nframes = 1001\n", 3, "out of range"),
        ("mix = \"S1\"\nframes = \"all\"\n", 2, "`paper`"),
        ("mix = \"S1\"\nframes = 1.5\n", 2, "a number of frames"),
        ("scene = \"lake\"\nframes = \"paper\"\n", 2, "a mix's"),
        ("kernel = \"nw\"\nframes = 2\n", 2, "rendering job"),
        ("cpu = \"mcf\"\nframes = 2\n", 2, "rendering job"),
        ("traces = [\"a.apt\"]\nframes = 2\n", 2, "rendering job"),
        (
            "mode = \"gpu-l1\"\nkernel = \"nw\"\nframes = 2\n",
            3,
            "rendering job",
        ),
    ] {
        let e = error(text);
        assert_eq!(e.line, line, "{text}: {e}");
        assert!(e.message.contains("frames"), "{text}: {e}");
        assert!(e.message.contains(says), "{text}: {e}");
    }
}
