//! `cargo bench`: how fast ossa loads, poses and skins every DPM of the corpus, next to what
//! copying the same bytes costs, plus a generated 100,000-vertex rig so that the figures mean
//! something without the corpus.
//!
//! ```text
//! cargo bench                     every model, full time budget
//! cargo bench -- zombie okm       only models whose name contains one of the words
//! cargo bench -- --quick          a short run (smaller budget; figures are noisier)
//! ```
//!
//! While the library and binary targets take part in `cargo bench`, their libtest harnesses
//! reject `--quick`; `cargo bench --bench ossa_bench -- --quick` or `OSSA_BENCH_QUICK=1 cargo
//! bench` work regardless (`bench = false` on `[lib]` and `[[bin]]` in Cargo.toml cures it).
//!
//! The corpus directory is `$OSSA_CORPUS` (default `../shared/corpus` beside the crate); its
//! `dpm/*.dpm` files are measured. A small timing harness stands in for a benchmark crate: every
//! measurement is warmed up, then repeated in samples until its time budget is spent; a sample
//! runs the operation in a batch long enough that reading the clock costs nothing, and the
//! tables give the median and the best sample per operation.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ossa::synth::TubeRig;
use ossa::{FrameBlend, LoadOptions, Mat3x4, Model, Strided};

const USAGE: &str = "usage: cargo bench [-- [--quick] [FILTER...]]
  FILTER   measure only models whose name contains it (case-insensitive; any of several)
  --quick  a short run: smaller warm-up and time budget per measurement
environment: OSSA_CORPUS = the corpus directory (default ../shared/corpus beside the crate)
             OSSA_BENCH_QUICK=1 = --quick";

/// Vertices of the generated model.
const SYNTH_VERTICES: u32 = 100_000;

/// Every measurement takes at least this many samples, whatever its budget.
const MIN_SAMPLES: usize = 5;
const MAX_SAMPLES: usize = 20_000;

struct Config {
    filters: Vec<String>,
    quick: bool,
    /// Time spent running an operation before sampling it.
    warmup: Duration,
    /// Time spent sampling one operation.
    budget: Duration,
    /// Shortest sample: fast operations run in batches at least this long.
    min_sample: Duration,
}

impl Config {
    fn from_args() -> Result<Config, String> {
        let mut config = Config {
            filters: Vec::new(),
            quick: std::env::var_os("OSSA_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0"),
            warmup: Duration::from_millis(60),
            budget: Duration::from_millis(250),
            min_sample: Duration::from_micros(50),
        };
        for arg in std::env::args().skip(1) {
            match arg.as_str() {
                // cargo bench passes --bench to every harness-less benchmark.
                "--bench" => {}
                "--quick" => config.quick = true,
                "-h" | "--help" => return Err(String::new()),
                a if a.starts_with('-') => return Err(format!("unknown option {a}")),
                a => config.filters.push(a.to_lowercase()),
            }
        }
        if config.quick {
            config.warmup = Duration::from_millis(10);
            config.budget = Duration::from_millis(40);
            config.min_sample = Duration::from_micros(20);
        }
        Ok(config)
    }

    fn selects(&self, name: &str) -> bool {
        let name = name.to_lowercase();
        self.filters.is_empty() || self.filters.iter().any(|f| name.contains(f.as_str()))
    }
}

/// Nanoseconds per call of one operation.
#[derive(Clone, Copy)]
struct Stats {
    median: f64,
    best: f64,
}

impl Stats {
    fn scaled(self, by: f64) -> Stats {
        Stats {
            median: self.median * by,
            best: self.best * by,
        }
    }
}

/// Warms `op` up, then times it in batched samples until the budget is spent.
fn measure(config: &Config, mut op: impl FnMut()) -> Stats {
    let start = Instant::now();
    let mut calls = 0u32;
    while calls == 0 || start.elapsed() < config.warmup {
        op();
        calls += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / f64::from(calls);
    let batch = (config.min_sample.as_secs_f64() / per_call.max(1e-9)).ceil() as u32;
    let batch = batch.clamp(1, 1_000_000);

    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < MIN_SAMPLES
        || (samples.len() < MAX_SAMPLES && start.elapsed() < config.budget)
    {
        let t = Instant::now();
        for _ in 0..batch {
            op();
        }
        samples.push(t.elapsed().as_secs_f64() * 1e9 / f64::from(batch));
    }
    samples.sort_by(f64::total_cmp);
    Stats {
        median: samples.get(samples.len() / 2).copied().unwrap_or_default(),
        best: samples.first().copied().unwrap_or_default(),
    }
}

/// A model to measure and the bytes it was loaded from.
struct Subject {
    name: String,
    bytes: Vec<u8>,
    model: Model,
    /// Vertices of each mesh.
    mesh_vertices: Vec<usize>,
    vertices: usize,
    influences: usize,
    triangles: usize,
}

impl Subject {
    fn new(name: String, bytes: Vec<u8>) -> Result<Subject, ossa::Error> {
        let options = LoadOptions {
            name: Some(format!("{name}.dpm")),
            ..LoadOptions::default()
        };
        let model = Model::load(&bytes, &options)?;
        let mesh_vertices: Vec<usize> = model.meshes().iter().map(|m| m.vertex_count()).collect();
        Ok(Subject {
            name,
            bytes,
            vertices: mesh_vertices.iter().sum(),
            influences: model
                .meshes()
                .iter()
                .map(|m| m.all_influences().len())
                .sum(),
            triangles: model.meshes().iter().map(|m| m.triangle_count()).sum(),
            mesh_vertices,
            model,
        })
    }

    /// Frames 0 and min(1, frames - 1), half each.
    fn two_frame_blend(&self) -> [FrameBlend; 2] {
        let second = self.model.frames().len().saturating_sub(1).min(1) as u32;
        [
            FrameBlend {
                frame: 0,
                weight: 0.5,
            },
            FrameBlend {
                frame: second,
                weight: 0.5,
            },
        ]
    }
}

fn corpus_dir() -> PathBuf {
    match std::env::var_os("OSSA_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    }
}

/// The corpus DPM files, or a line saying why there are none.
fn corpus_files() -> Result<Vec<PathBuf>, String> {
    let dir = corpus_dir().join("dpm");
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        format!(
            "corpus: {} cannot be read ({e}); set OSSA_CORPUS to the corpus directory. \
             Only the generated model is measured.",
            dir.display()
        )
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("dpm")))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "corpus: no .dpm files in {}; only the generated model is measured.",
            dir.display()
        ));
    }
    Ok(files)
}

/// The selected models, largest first; problems are printed and skipped.
fn subjects(config: &Config) -> Vec<Subject> {
    let mut out = Vec::new();
    let synth_name = format!("synth_tube_{}k", SYNTH_VERTICES / 1000);
    if config.selects(&synth_name) {
        let built = TubeRig::with_vertices(SYNTH_VERTICES)
            .build()
            .and_then(|m| ossa::dpm::write(&m))
            .and_then(|bytes| Subject::new(synth_name.clone(), bytes));
        match built {
            Ok(s) => out.push(s),
            Err(e) => println!("{synth_name}: cannot be generated: {e}"),
        }
    }
    match corpus_files() {
        Ok(files) => {
            let dir = files
                .first()
                .and_then(|f| f.parent())
                .unwrap_or(Path::new(""));
            println!("corpus: {} ({} DPM files)", dir.display(), files.len());
            for path in files {
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if !config.selects(&name) {
                    continue;
                }
                let loaded = std::fs::read(&path)
                    .map_err(|e| format!("cannot read: {e}"))
                    .and_then(|bytes| Subject::new(name.clone(), bytes).map_err(|e| e.to_string()));
                match loaded {
                    Ok(s) => out.push(s),
                    Err(e) => println!("{name}: skipped: {e}"),
                }
            }
        }
        Err(why) => println!("{why}"),
    }
    out.sort_by(|a, b| b.vertices.cmp(&a.vertices).then(a.name.cmp(&b.name)));
    out
}

/// "AMD EPYC, 2 CPUs" from /proc/cpuinfo and the scheduler.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, v)| v.trim());
    let listed = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let usable = std::thread::available_parallelism().map_or(0, |n| n.get());
    if listed == 0 || listed == usable {
        format!("{model}, {usable} CPUs")
    } else {
        format!("{model}, {listed} CPUs ({usable} usable)")
    }
}

/// Jiffies of the whole machine and of this process, to tell how busy other processes kept the
/// CPUs while a table was measured (the two-thread figures need an otherwise idle machine).
struct CpuMeter {
    total: u64,
    busy: u64,
    own: u64,
}

impl CpuMeter {
    fn now() -> Option<CpuMeter> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        // user nice system idle iowait irq softirq steal
        let total: u64 = cpu.iter().sum();
        let idle = cpu.get(3).copied().unwrap_or(0) + cpu.get(4).copied().unwrap_or(0);
        let own_stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // After the command name in parentheses: state is field 3, utime 14 and stime 15.
        let (_, after_name) = own_stat.rsplit_once(')')?;
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let field = |n: usize| fields.get(n - 3).and_then(|v| v.parse::<u64>().ok());
        Some(CpuMeter {
            total,
            busy: total.saturating_sub(idle),
            own: field(14)? + field(15)?,
        })
    }

    /// "other load: 0.02 of 2 CPUs" since `start`, with a warning when it is high.
    fn report(start: &Option<CpuMeter>) -> String {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (Some(start), Some(end)) = (start, CpuMeter::now()) else {
            return "other load: unknown".to_owned();
        };
        let total = end.total.saturating_sub(start.total);
        if total == 0 {
            return "other load: unknown".to_owned();
        }
        let others = end
            .busy
            .saturating_sub(start.busy)
            .saturating_sub(end.own.saturating_sub(start.own));
        let load = others as f64 / total as f64 * cpus as f64;
        let warning = if load > 0.2 {
            ": other processes competed for the CPUs, these figures are unreliable"
        } else {
            ""
        };
        format!("other load while measuring: {load:.2} of {cpus} CPUs{warning}")
    }
}

// ---- formatting ----

fn time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn bytes(n: usize) -> String {
    let n = n as f64;
    if n < 1024.0 {
        format!("{n} B")
    } else if n < 1024.0 * 1024.0 {
        format!("{:.1} KiB", n / 1024.0)
    } else {
        format!("{:.2} MiB", n / (1024.0 * 1024.0))
    }
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}x", a / b)
    } else {
        "-".to_owned()
    }
}

fn num(x: f64) -> String {
    if x < 10.0 {
        format!("{x:.2}")
    } else if x < 1000.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.0}")
    }
}

/// A table printed a row at a time: the first column left-aligned, the others right-aligned.
struct Table {
    widths: Vec<usize>,
}

impl Table {
    /// Prints the title (its lines after the first indented) and the header; `name_width` is the
    /// width of the first column.
    fn start(title: &[&str], name_width: usize, columns: &[(&str, usize)]) -> Table {
        for (i, line) in title.iter().enumerate() {
            println!("{}{line}", if i == 0 { "\n" } else { "  " });
        }
        let mut widths = vec![name_width.max(5)];
        widths.extend(columns.iter().map(|(h, w)| h.chars().count().max(*w)));
        let table = Table { widths };
        let mut header = vec!["model".to_owned()];
        header.extend(columns.iter().map(|(h, _)| (*h).to_owned()));
        table.row(&header);
        table
    }

    fn row(&self, cells: &[String]) {
        let mut line = String::new();
        for (i, (cell, width)) in cells.iter().zip(&self.widths).enumerate() {
            let pad = width.saturating_sub(cell.chars().count());
            if i == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str("  ");
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        println!("{}", line.trim_end());
    }
}

// ---- skinning into disjoint parts of shared buffers ----

/// One mesh's vertices `[first, first + positions.len() / 3)` and where they go.
struct Part<'a> {
    mesh: usize,
    first: usize,
    positions: &'a mut [f32],
    normals: &'a mut [f32],
}

/// Cuts packed position and normal buffers into one part per mesh, meshes one after another.
fn mesh_parts<'a>(
    mesh_vertices: &[usize],
    mut positions: &'a mut [f32],
    mut normals: &'a mut [f32],
) -> Vec<Part<'a>> {
    let mut parts = Vec::with_capacity(mesh_vertices.len());
    for (mesh, &count) in mesh_vertices.iter().enumerate() {
        let (p, p_rest) = std::mem::take(&mut positions).split_at_mut(count * 3);
        let (n, n_rest) = std::mem::take(&mut normals).split_at_mut(count * 3);
        positions = p_rest;
        normals = n_rest;
        parts.push(Part {
            mesh,
            first: 0,
            positions: p,
            normals: n,
        });
    }
    parts
}

/// Splits every mesh's part in two halves: the first halves for one thread, the second for the other.
fn halves<'a>(parts: Vec<Part<'a>>) -> (Vec<Part<'a>>, Vec<Part<'a>>) {
    let mut low = Vec::with_capacity(parts.len());
    let mut high = Vec::with_capacity(parts.len());
    for part in parts {
        let count = part.positions.len() / 3;
        let half = count / 2;
        let (p_low, p_high) = part.positions.split_at_mut(half * 3);
        let (n_low, n_high) = part.normals.split_at_mut(half * 3);
        low.push(Part {
            mesh: part.mesh,
            first: part.first,
            positions: p_low,
            normals: n_low,
        });
        high.push(Part {
            mesh: part.mesh,
            first: part.first + half,
            positions: p_high,
            normals: n_high,
        });
    }
    (low, high)
}

/// Skins positions and normals of every part with one ossa::Strided target each.
fn skin_parts(model: &Model, bones: &[Mat3x4], parts: &mut [Part<'_>]) -> ossa::Result<()> {
    for part in parts {
        let count = part.positions.len() / 3;
        let mut target =
            Strided::new(&mut *part.positions, 3)?.with_normals(&mut *part.normals, 3)?;
        model.skin_mesh(part.mesh, bones, part.first, count, 0, &mut target)?;
    }
    Ok(())
}

/// Waits for `ready`: spins briefly, then parks until the thread that makes it true unparks
/// this one (a token left by an earlier unpark only makes the loop look again).
fn wait_for(ready: impl Fn() -> bool) {
    for _ in 0..2_000 {
        if ready() {
            return;
        }
        std::hint::spin_loop();
    }
    while !ready() {
        std::thread::park();
    }
}

/// Two threads, spawned for every call with std::thread::scope, as a caller would skin a frame.
fn measure_scoped(
    config: &Config,
    model: &Model,
    bones: &[Mat3x4],
    mine: &mut [Part<'_>],
    theirs: &mut [Part<'_>],
) -> Stats {
    measure(config, || {
        std::thread::scope(|s| {
            let theirs = &mut *theirs;
            let helper = s.spawn(move || skin_parts(model, bones, theirs));
            let a = skin_parts(model, bones, mine);
            let b = helper.join().unwrap_or_else(|_| {
                Err(ossa::Error::invalid_argument("the helper thread panicked"))
            });
            if let Err(e) = a.and(b) {
                eprintln!("skinning failed: {e}");
                std::process::abort();
            }
        })
    })
}

/// Two threads, one of them a helper that lives for the whole measurement and is started per
/// call through an atomic counter (and unpark): the kernel's scaling without spawning a thread.
fn measure_resident(
    config: &Config,
    model: &Model,
    bones: &[Mat3x4],
    mine: &mut [Part<'_>],
    theirs: &mut [Part<'_>],
) -> Stats {
    let started = AtomicU64::new(0);
    let finished = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let main = std::thread::current();
    std::thread::scope(|s| {
        let helper = s.spawn(|| {
            let mut seen = 0;
            loop {
                wait_for(|| {
                    stop.load(Ordering::Acquire) || started.load(Ordering::Acquire) != seen
                });
                if stop.load(Ordering::Acquire) {
                    break;
                }
                seen = started.load(Ordering::Acquire);
                if let Err(e) = skin_parts(model, bones, theirs) {
                    // The main thread would wait for this call forever.
                    eprintln!("skinning failed on the helper thread: {e}");
                    std::process::abort();
                }
                finished.store(seen, Ordering::Release);
                main.unpark();
            }
        });
        let helper = helper.thread();
        let mut round = 0u64;
        let stats = measure(config, || {
            round += 1;
            started.store(round, Ordering::Release);
            helper.unpark();
            if let Err(e) = skin_parts(model, bones, mine) {
                eprintln!("skinning failed: {e}");
                std::process::abort();
            }
            wait_for(|| finished.load(Ordering::Acquire) == round);
        });
        stop.store(true, Ordering::Release);
        helper.unpark();
        stats
    })
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

// ---- the measurements ----

fn print_models(subjects: &[Subject], name_width: usize) {
    let table = Table::start(
        &["models, by vertex count"],
        name_width,
        &[
            ("verts", 7),
            ("influences", 7),
            ("infl/v", 4),
            ("tris", 7),
            ("meshes", 3),
            ("bones", 3),
            ("frames", 3),
            ("file", 9),
        ],
    );
    for s in subjects {
        table.row(&[
            s.name.clone(),
            s.vertices.to_string(),
            s.influences.to_string(),
            format!("{:.2}", s.influences as f64 / s.vertices.max(1) as f64),
            s.triangles.to_string(),
            s.mesh_vertices.len().to_string(),
            s.model.bones().len().to_string(),
            s.model.frames().len().to_string(),
            bytes(s.bytes.len()),
        ]);
    }
}

fn bench_load(config: &Config, subjects: &[Subject], name_width: usize) {
    let table = Table::start(
        &[
            "load: Model::load of the file's bytes vs copying the bytes",
            "memcpy = copy_from_slice into a preallocated buffer; clone = Vec clone and free",
            "heap = Model::heap_bytes(); MB/s = file bytes per second of load",
        ],
        name_width,
        &[
            ("load med", 9),
            ("load best", 9),
            ("memcpy med", 9),
            ("clone med", 9),
            ("load/memcpy", 0),
            ("load MB/s", 0),
            ("heap", 9),
            ("file", 9),
            ("heap/file", 0),
        ],
    );
    let meter = CpuMeter::now();
    let options = LoadOptions::default();
    for s in subjects {
        let load = measure(config, || {
            let model = Model::load(black_box(&s.bytes), &options);
            black_box(&model);
        });
        let mut buffer = vec![0u8; s.bytes.len()];
        let memcpy = measure(config, || {
            buffer.copy_from_slice(black_box(&s.bytes));
            black_box(&mut buffer);
        });
        let clone = measure(config, || {
            black_box(black_box(&s.bytes).clone());
        });
        let heap = s.model.heap_bytes();
        table.row(&[
            s.name.clone(),
            time(load.median),
            time(load.best),
            time(memcpy.median),
            time(clone.median),
            ratio(load.median, memcpy.median),
            num(s.bytes.len() as f64 / load.median * 1e3),
            bytes(heap),
            bytes(s.bytes.len()),
            ratio(heap as f64, s.bytes.len() as f64),
        ]);
    }
    println!("{}", CpuMeter::report(&meter));
}

fn bench_pose(config: &Config, subjects: &[Subject], name_width: usize) {
    let table = Table::start(
        &[
            "pose: Model::pose_frames, ns per bone",
            "blend = frames 0 and min(1, frames-1) at 0.5/0.5; single = frame min(1, frames-1)",
        ],
        name_width,
        &[
            ("bones", 3),
            ("blend ns/bone med", 0),
            ("best", 7),
            ("blend total", 9),
            ("single ns/bone med", 0),
            ("best", 7),
            ("single total", 9),
            ("blend/single", 0),
        ],
    );
    let meter = CpuMeter::now();
    for s in subjects {
        let model = &s.model;
        let bones = model.bones().len();
        let mut out = vec![Mat3x4::IDENTITY; bones];
        let blend = s.two_frame_blend();
        let single = [FrameBlend {
            frame: blend[1].frame,
            weight: 1.0,
        }];
        if let Err(e) = model
            .pose_frames(&blend, None, &mut out)
            .and_then(|()| model.pose_frames(&single, None, &mut out))
        {
            println!("{}: cannot be posed: {e}", s.name);
            continue;
        }
        let mut run = |frames: &[FrameBlend]| {
            measure(config, || {
                let r = model.pose_frames(black_box(frames), None, &mut out);
                black_box((&r, &mut out));
            })
        };
        let two = run(&blend);
        let one = run(&single);
        let per_bone = 1.0 / bones.max(1) as f64;
        let (two_b, one_b) = (two.scaled(per_bone), one.scaled(per_bone));
        table.row(&[
            s.name.clone(),
            bones.to_string(),
            num(two_b.median),
            num(two_b.best),
            time(two.median),
            num(one_b.median),
            num(one_b.best),
            time(one.median),
            ratio(two.median, one.median),
        ]);
    }
    println!("{}", CpuMeter::report(&meter));
}

fn bench_skin(config: &Config, subjects: &[Subject], name_width: usize) {
    let one = Table::start(
        &[
            "skin, 1 thread: Model::skin_mesh of every mesh, positions+normals, ns per vertex",
            "into packed Strided buffers (stride 3, separate normals), no flags; pose = the blend",
            "copy = copying the 24 output bytes per vertex between preallocated buffers",
            "path = kernel (skinned) or rest (a one-frame model whose pose is its bind pose)",
        ],
        name_width,
        &[
            ("verts", 7),
            ("path", 6),
            ("skin ns/v med", 0),
            ("best", 6),
            ("skin total", 9),
            ("ns/infl", 0),
            ("copy ns/v med", 0),
            ("best", 6),
            ("skin/copy", 0),
            ("Mverts/s", 0),
        ],
    );
    let meter = CpuMeter::now();
    let mut rows_two = Vec::new();
    for s in subjects {
        let model = &s.model;
        let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
        if let Err(e) = model.pose_frames(&s.two_frame_blend(), None, &mut bones) {
            println!("{}: cannot be posed: {e}", s.name);
            continue;
        }
        let path = if bones.as_slice() == model.skeleton().bind_pose() && model.frames().len() == 1
        {
            "rest"
        } else {
            "kernel"
        };
        let floats = s.vertices * 3;
        let mut positions = vec![f32::NAN; floats];
        let mut normals = vec![f32::NAN; floats];

        let mut parts = mesh_parts(&s.mesh_vertices, &mut positions, &mut normals);
        if let Err(e) = skin_parts(model, &bones, &mut parts) {
            println!("{}: cannot be skinned: {e}", s.name);
            continue;
        }
        let skin = measure(config, || {
            skin_parts(model, &bones, black_box(&mut parts)).unwrap_or_else(|e| {
                eprintln!("skinning failed: {e}");
                std::process::abort()
            });
        });
        drop(parts);
        let reference = (positions.clone(), normals.clone());

        let source: Vec<f32> = (0..floats * 2).map(|i| i as f32).collect();
        let (src_p, src_n) = source.split_at(floats);
        let copy = measure(config, || {
            positions.copy_from_slice(black_box(src_p));
            normals.copy_from_slice(black_box(src_n));
            black_box((&mut positions, &mut normals));
        });

        let per_vertex = 1.0 / s.vertices.max(1) as f64;
        let (skin_v, copy_v) = (skin.scaled(per_vertex), copy.scaled(per_vertex));
        one.row(&[
            s.name.clone(),
            s.vertices.to_string(),
            path.to_owned(),
            num(skin_v.median),
            num(skin_v.best),
            time(skin.median),
            if path == "rest" {
                "-".to_owned()
            } else {
                num(skin.median / s.influences.max(1) as f64)
            },
            num(copy_v.median),
            num(copy_v.best),
            ratio(skin.median, copy.median),
            num(1e3 / skin_v.median),
        ]);

        // Two threads, each skinning half of every mesh into its own part of the buffers.
        let mut two = |resident: bool| {
            positions.fill(f32::NAN);
            normals.fill(f32::NAN);
            let (mut low, mut high) =
                halves(mesh_parts(&s.mesh_vertices, &mut positions, &mut normals));
            let stats = if resident {
                measure_resident(config, model, &bones, &mut low, &mut high)
            } else {
                measure_scoped(config, model, &bones, &mut low, &mut high)
            };
            let same = same_bits(&positions, &reference.0) && same_bits(&normals, &reference.1);
            (stats.scaled(per_vertex), same)
        };
        let (scoped, scoped_same) = two(false);
        let (resident, resident_same) = two(true);
        if !(scoped_same && resident_same) {
            println!(
                "{}: two threads wrote different output than one thread!",
                s.name
            );
        }
        rows_two.push(vec![
            s.name.clone(),
            s.vertices.to_string(),
            num(skin_v.median),
            num(scoped.median),
            num(scoped.best),
            ratio(skin_v.median, scoped.median),
            num(resident.median),
            num(resident.best),
            ratio(skin_v.median, resident.median),
        ]);
    }

    let two = Table::start(
        &[
            "skin, 2 threads: each skins half of every mesh into its own part of the buffers",
            "ns per vertex of the whole model; speed-up = 1 thread median / 2 threads median",
            "spawned = std::thread::scope per call; resident = one helper thread kept alive,",
            "started per call through an atomic and unpark (the kernel's scaling alone)",
        ],
        name_width,
        &[
            ("verts", 7),
            ("1T ns/v", 0),
            ("spawned ns/v med", 0),
            ("best", 6),
            ("speed-up", 0),
            ("resident ns/v med", 0),
            ("best", 6),
            ("speed-up", 0),
        ],
    );
    for row in &rows_two {
        two.row(row);
    }
    println!("{} (both skin tables)", CpuMeter::report(&meter));
}

fn main() -> ExitCode {
    let config = match Config::from_args() {
        Ok(c) => c,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("ossa_bench: {e}");
            }
            eprintln!("{USAGE}");
            return if e.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    println!(
        "ossa {} bench on {}; {} ms warm-up + {} ms per measurement{}; times are median and best \
         of the samples",
        env!("CARGO_PKG_VERSION"),
        machine(),
        config.warmup.as_millis(),
        config.budget.as_millis(),
        if config.quick { " (--quick)" } else { "" },
    );
    let subjects = subjects(&config);
    if subjects.is_empty() {
        println!("no model matches {:?}", config.filters);
        return ExitCode::SUCCESS;
    }
    let name_width = subjects
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    print_models(&subjects, name_width);
    bench_load(&config, &subjects, name_width);
    bench_pose(&config, &subjects, name_width);
    bench_skin(&config, &subjects, name_width);
    ExitCode::SUCCESS
}
