#![no_main]
// A skill file and its CFP added to a skeleton (see ossa_fuzz::skills).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ossa_fuzz::skills(data));
