#![no_main]
// A model of any format optimised with the flags of the first byte, then saved by every writer
// and loaded again (see ossa_fuzz::optimize_save).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ossa_fuzz::optimize_save(data));
