#![no_main]
// The CFP decoder and its encoders (see ossa_fuzz::cfp).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ossa_fuzz::cfp(data));
