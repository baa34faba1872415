fn main() {
    let path = std::env::args().nth(1).unwrap();
    let data = std::fs::read(&path).unwrap();
    let opts = ossa::LoadOptions {
        name: Some(path.clone()),
        ..Default::default()
    };
    let n = 1000;
    let t = std::time::Instant::now();
    for _ in 0..n {
        let m = ossa::Model::load(&data, &opts).unwrap();
        std::hint::black_box(&m);
    }
    println!(
        "{:.1} us per load",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
}
