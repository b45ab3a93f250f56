#![no_main]
//! The `report_node_junit` target: `fcorr::fuzzing` holds it and says what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fcorr::fuzzing::run("report_node_junit", data));
