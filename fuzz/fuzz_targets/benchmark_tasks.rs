#![no_main]
//! The `benchmark_tasks` target: `fcorr::fuzzing` holds it and says what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fcorr::fuzzing::run("benchmark_tasks", data));
