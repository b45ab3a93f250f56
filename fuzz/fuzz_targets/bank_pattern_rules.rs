#![no_main]
//! The `bank_pattern_rules` target: `fcorr::fuzzing` holds it and says what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fcorr::fuzzing::run("bank_pattern_rules", data));
