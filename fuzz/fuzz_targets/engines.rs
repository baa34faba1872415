#![no_main]
// The engine rules on any bytes: the first byte picks the engine and whether the file is a
// Warfork player model, the rest is the file and its animation.cfg (see ossa_fuzz::engines).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ossa_fuzz::engines(data));
