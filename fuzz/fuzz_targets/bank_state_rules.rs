#![no_main]
//! The `bank_state_rules` target: `fcorr::fuzzing` holds it and says what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fcorr::fuzzing::run("bank_state_rules", data));
