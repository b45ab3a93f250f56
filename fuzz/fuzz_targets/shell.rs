#![no_main]
//! The `shell` target: `fcorr::fuzzing` holds it and says what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fcorr::fuzzing::run("shell", data));
