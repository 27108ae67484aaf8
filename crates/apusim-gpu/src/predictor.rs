//! The two L1 bypass predictors of adaptive-gpu-l1-bypassing.txt (PC-based, Listing 1;
//! counter-based, §3.3) and their storage accounting. They live in
//! `apusim_cache::policies::l1_bypass` so that `apusim-sim`'s GPU caches can use them too,
//! registered there in `PREDICTORS`; see that module for the algorithms and the choices made
//! where the paper is silent.

pub use apusim_cache::policies::l1_bypass::{
    build_predictor, hash_bits, CounterPredictor, PcPredictor, Storage, PC_COUNTER_BITS, PREDICTORS,
};
