#![no_main]
//! The `dataset_json` target: `fcorr::fuzzing` holds it and says what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fcorr::fuzzing::run("dataset_json", data));
