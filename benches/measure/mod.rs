//! How fast ossa loads, poses and skins models, beside what copying the same bytes costs and
//! beside C baselines that skin the way DarkPlaces does (its default SSE path, and a scalar
//! rendering of its generic path): shared by `cargo bench` and `ossa bench`, which print the
//! same tables.
//!
//! A small timing harness stands in for a benchmark crate: every measurement is warmed up, then
//! repeated in samples until its time budget is spent; a sample runs the operation in a batch
//! long enough that reading the clock costs nothing; figures are the median sample.

use std::cell::Cell;
use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ossa::io::{DirFileSystem, FileData, FileSystem};
use ossa::synth::TubeRig;
use ossa::{FrameBlend, Influence, Interleaved, Kernel, LoadOptions, Mat3x4, Model, Strided};

mod baseline;
use baseline::{Baseline, Sse};

const USAGE: &str = "arguments: [--quick] [FILE | FILTER]...
  FILE     measure this model (any format ossa loads; sidecars are read beside it)
  FILTER   of the default models (the generated 100,000-vertex rig, a DPM, and every corpus
           DPM, SKM and IQM of more than 1,000 vertices), measure those whose name contains
           it, or whose format it names: a format's extension or a word of its name (dpm,
           skm, iqm, gltf or glb, cmx, dmf, skel, mod, msh ...)
  --quick  a short run: smaller warm-up and time budget per measurement
environment: OSSA_CORPUS = the corpus directory (default ../shared/corpus beside the crate)
             OSSA_BENCH_QUICK=1 = --quick; OSSA_SKIN_KERNEL = portable, sse2, avx2 or avx512
             CC = the C compiler for the baseline (default cc)";

/// Vertices of the generated model.
const SYNTH_VERTICES: u32 = 100_000;
/// Corpus models with more vertices than this are measured by default.
const DEFAULT_MIN_VERTICES: usize = 1000;
/// Output buffers start on a cache line, so that two threads' ranges cut where a line starts
/// share none.
const CACHE_LINE: usize = 64;

const MIN_SAMPLES: usize = 5;
const MAX_SAMPLES: usize = 20_000;

struct Config {
    files: Vec<PathBuf>,
    filters: Vec<String>,
    quick: bool,
    warmup: Duration,
    budget: Duration,
    /// Shortest sample: fast operations run in batches at least this long.
    min_sample: Duration,
}

impl Config {
    /// From command-line arguments; `Err("")` asks for the usage text. `test_run`: a bench
    /// target run by `cargo test`, not `cargo bench`, runs short.
    fn from_args(args: impl Iterator<Item = String>, test_run: bool) -> Result<Config, String> {
        let mut config = Config {
            files: Vec::new(),
            filters: Vec::new(),
            quick: std::env::var_os("OSSA_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0"),
            warmup: Duration::from_millis(60),
            budget: Duration::from_millis(250),
            min_sample: Duration::from_micros(50),
        };
        let mut under_cargo_bench = false;
        for arg in args {
            match arg.as_str() {
                // cargo bench passes --bench to every harness-less benchmark; `cargo test
                // --all-targets` runs it without, as a test: a short run is enough there.
                "--bench" => under_cargo_bench = true,
                "--quick" => config.quick = true,
                "-h" | "--help" => return Err(String::new()),
                a if a.starts_with('-') => return Err(format!("unknown option {a}")),
                a if Path::new(a).is_file() || names_a_file(a) => {
                    config.files.push(PathBuf::from(a))
                }
                a => config.filters.push(a.to_lowercase()),
            }
        }
        if test_run && !under_cargo_bench {
            config.quick = true;
        }
        if config.quick {
            config.warmup = Duration::from_millis(10);
            config.budget = Duration::from_millis(40);
            config.min_sample = Duration::from_micros(20);
        }
        Ok(config)
    }

    /// Whether a default model named `name`, from a file named `file`, is measured.
    fn selects(&self, name: &str, file: &str) -> bool {
        let name = name.to_lowercase();
        let format = ossa::Format::from_extension(file);
        self.filters.is_empty()
            || self.filters.iter().any(|f| {
                name.contains(f.as_str()) || format.is_some_and(|format| names_format(f, format))
            })
    }
}

/// Whether `word` (lower case) names `format`: its extension as [`ossa::Format::from_extension`]
/// reads it, or a word of [`ossa::Format::name`] (so "gltf" names glTF binary too).
fn names_format(word: &str, format: ossa::Format) -> bool {
    ossa::Format::from_extension(&format!(".{word}")) == Some(format)
        || format
            .name()
            .to_lowercase()
            .split_whitespace()
            .any(|w| w == word)
}

/// Whether an argument that names no existing file was meant as one (a path, or a name with a
/// model's extension) rather than a filter: loading it then says what is wrong, where a filter
/// would quietly match nothing.
fn names_a_file(arg: &str) -> bool {
    arg.contains(['/', '\\']) || ossa::Format::from_extension(arg).is_some()
}

/// Runs `op` for the warm-up time and gives the batch of calls that makes one sample.
fn warm_up(config: &Config, mut op: impl FnMut()) -> u32 {
    let start = Instant::now();
    let mut calls = 0u32;
    while calls == 0 || start.elapsed() < config.warmup {
        op();
        calls += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / f64::from(calls);
    let batch = (config.min_sample.as_secs_f64() / per_call.max(1e-9)).ceil() as u32;
    batch.clamp(1, 1_000_000)
}

/// Median nanoseconds per call of `op`, after a warm-up, in batched samples.
fn measure(config: &Config, mut op: impl FnMut()) -> f64 {
    let batch = warm_up(config, &mut op);
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
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// CPU time this thread has run, in nanoseconds: time the scheduler gave other processes is
/// not counted.
fn thread_cpu_ns() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
}

/// The figures of [`measure_paired`].
struct Paired {
    /// Thread CPU nanoseconds per call of each operation, one per round.
    times: Vec<Vec<f64>>,
    rounds: usize,
    /// Wall time over thread CPU time, all samples together: above 1, the scheduler ran other
    /// work on this thread's CPU while it was measured.
    wall_over_cpu: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

impl Paired {
    /// Median nanoseconds per call of operation `i`.
    fn ns(&self, i: usize) -> f64 {
        median(self.times[i].clone())
    }

    /// The median, least and largest over the rounds of `a`'s time divided by `b`'s, the two
    /// measured in the same round.
    fn ratio(&self, a: usize, b: usize) -> [f64; 3] {
        let r: Vec<f64> = self.times[a]
            .iter()
            .zip(&self.times[b])
            .map(|(x, y)| x / y)
            .collect();
        let least = r.iter().copied().fold(f64::INFINITY, f64::min);
        let most = r.iter().copied().fold(0.0, f64::max);
        [median(r), least, most]
    }
}

/// Times the operations in rounds, each round running every one of them once in a batch (in
/// turn, the order reversed every other round), by this thread's CPU time; ratios are taken
/// within a round, so that a slow phase of the machine slows both sides of a ratio.
fn measure_paired(config: &Config, ops: &mut [&mut dyn FnMut()]) -> Paired {
    let mut batches = Vec::new();
    for op in ops.iter_mut() {
        batches.push(warm_up(config, op));
    }
    let n = ops.len();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); n];
    let (mut wall, mut cpu) = (0.0, 0.0);
    let budget = config.budget * n as u32;
    let start = Instant::now();
    let mut round = 0;
    while round < MIN_SAMPLES || (round < MAX_SAMPLES && start.elapsed() < budget) {
        for k in 0..n {
            let i = if round % 2 == 0 { k } else { n - 1 - k };
            let (w, c) = (Instant::now(), thread_cpu_ns());
            for _ in 0..batches[i] {
                ops[i]();
            }
            let spent = thread_cpu_ns() - c;
            wall += w.elapsed().as_secs_f64() * 1e9;
            cpu += spent;
            times[i].push(spent / f64::from(batches[i]));
        }
        round += 1;
    }
    Paired {
        times,
        rounds: round,
        wall_over_cpu: if cpu > 0.0 { wall / cpu } else { f64::NAN },
    }
}

// ---- models ----

/// Serves the files one load read, from memory, so that loading can be timed without the disk.
#[derive(Default)]
struct Recorded {
    files: HashMap<String, Vec<u8>>,
}

impl FileSystem for Recorded {
    fn read(&self, path: &str) -> ossa::Result<FileData<'_>> {
        match self.files.get(path) {
            Some(bytes) => Ok(Box::new(bytes.as_slice())),
            None => Err(ossa::Error::not_found(format!("{path}: not read before"))),
        }
    }
}

/// Reads through a directory and keeps what it read.
struct Recorder {
    dir: DirFileSystem,
    seen: std::cell::RefCell<Recorded>,
}

impl FileSystem for Recorder {
    fn read(&self, path: &str) -> ossa::Result<FileData<'_>> {
        let data = self.dir.read(path)?;
        let bytes = data.as_ref().as_ref().to_vec();
        self.seen.borrow_mut().files.insert(path.to_owned(), bytes);
        Ok(data)
    }
}

/// A model to measure, the files it was loaded from, and how to load it again from memory.
struct Subject {
    name: String,
    /// The model file's name, as its sidecars are looked up beside it.
    file_name: String,
    files: Recorded,
    bytes: usize,
    model: Model,
    mesh_vertices: Vec<usize>,
    vertices: usize,
    influences: usize,
}

impl Subject {
    fn from_file(path: &Path) -> Result<Subject, String> {
        if !path.exists() {
            return Err(format!(
                "{}: no such file",
                ossa::ErrorCode::NotFound.name()
            ));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or("not a file name")?;
        let recorder = Recorder {
            dir: DirFileSystem::new(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            }),
            seen: Default::default(),
        };
        let options = LoadOptions {
            io: Some(&recorder),
            ..LoadOptions::default()
        };
        let model = Model::load_file(&file_name, &options).map_err(|e| {
            // The message starts with the file's name, which the caller puts first already.
            let message = e.to_string();
            let message = message
                .strip_prefix(&format!("{file_name}: "))
                .unwrap_or(&message);
            format!("{}: {message}", e.code().name())
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Subject::new(
            name,
            file_name,
            recorder.seen.into_inner(),
            model,
        ))
    }

    fn synthetic() -> Result<Subject, String> {
        let name = format!("synth_tube_{}k", SYNTH_VERTICES / 1000);
        let bytes = TubeRig::with_vertices(SYNTH_VERTICES)
            .build()
            .and_then(|m| ossa::dpm::write(&m))
            .map_err(|e| e.to_string())?;
        let file_name = format!("{name}.dpm");
        let mut files = Recorded::default();
        files.files.insert(file_name.clone(), bytes);
        let model = Subject::load(&file_name, &files).map_err(|e| e.to_string())?;
        Ok(Subject::new(name, file_name, files, model))
    }

    fn new(name: String, file_name: String, files: Recorded, model: Model) -> Subject {
        let mesh_vertices: Vec<usize> = model.meshes().iter().map(|m| m.vertex_count()).collect();
        Subject {
            name,
            file_name,
            bytes: files.files.values().map(Vec::len).sum(),
            files,
            vertices: mesh_vertices.iter().sum(),
            influences: model
                .meshes()
                .iter()
                .map(|m| m.all_influences().len())
                .sum(),
            mesh_vertices,
            model,
        }
    }

    /// Loads the model from the recorded bytes, sidecars included.
    fn load(file_name: &str, files: &Recorded) -> ossa::Result<Model> {
        let data = files.read(file_name)?;
        let options = LoadOptions {
            name: Some(file_name.to_owned()),
            io: Some(files),
            ..LoadOptions::default()
        };
        Model::load(data.as_ref().as_ref(), &options)
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

    /// The largest extent of the bind pose's bounds: the scale differences are judged against.
    fn size(&self) -> f32 {
        let (mins, maxs) = self.model.bounds();
        (0..3)
            .map(|a| maxs[a] - mins[a])
            .fold(0.0f32, f32::max)
            .max(f32::MIN_POSITIVE)
    }
}

fn corpus_dir() -> PathBuf {
    match std::env::var_os("OSSA_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    }
}

/// The corpus's DPM, SKM and IQM files, or a line saying why there are none.
fn corpus_files() -> Result<Vec<PathBuf>, String> {
    let root = corpus_dir();
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let mut files = Vec::new();
    for (kind, ext) in [("dpm", "dpm"), ("skm", "skm"), ("iqm", "iqm")] {
        let Ok(entries) = std::fs::read_dir(root.join(kind)) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case(ext))),
        );
    }
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "corpus: no DPM, SKM or IQM files under {} (set OSSA_CORPUS); only the generated model is measured",
            root.display()
        ));
    }
    println!("corpus: {}", root.display());
    Ok(files)
}

/// The models to measure, largest first: the files given, else the defaults. A default model
/// that does not load is printed and skipped; a file given that does not load is an error, one
/// line each.
fn subjects(config: &Config) -> Result<Vec<Subject>, Vec<String>> {
    let mut out = Vec::new();
    let mut add = |name: &str, loaded: Result<Subject, String>| match loaded {
        Ok(s) => out.push(s),
        Err(e) => println!("{name}: skipped: {e}"),
    };
    if !config.files.is_empty() {
        let mut failed = Vec::new();
        for path in &config.files {
            match Subject::from_file(path) {
                Ok(s) => out.push(s),
                Err(e) => failed.push(format!("{}: {e}", path.display())),
            }
        }
        if !failed.is_empty() {
            return Err(failed);
        }
    } else {
        if config.selects("synth_tube", "synth_tube.dpm") {
            add("synth_tube", Subject::synthetic());
        }
        match corpus_files() {
            Ok(files) => {
                for path in files {
                    let name = path.file_stem().unwrap_or_default().to_string_lossy();
                    if !config.selects(&name, &path.to_string_lossy()) {
                        continue;
                    }
                    match Subject::from_file(&path) {
                        Ok(s) if s.vertices <= DEFAULT_MIN_VERTICES => {}
                        // An SKM LOD or skeleton that does not load alone is not a default.
                        Err(_) if path.extension().is_some_and(|x| x == "skm") => {}
                        loaded => add(&name, loaded),
                    }
                }
            }
            Err(why) => println!("{why}"),
        }
    }
    out.sort_by(|a, b| b.vertices.cmp(&a.vertices).then(a.name.cmp(&b.name)));
    if out.is_empty() {
        let why = if config.filters.is_empty() {
            "no model to measure".to_owned()
        } else {
            format!(
                "no model to measure: no default model's name contains {}, nor is its format",
                config.filters.join(" or ")
            )
        };
        return Err(vec![why]);
    }
    Ok(out)
}

/// "AMD EPYC, 2 CPUs" from /proc/cpuinfo and the scheduler.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, v)| v.trim());
    let usable = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {usable} CPUs, {}", vector_features())
}

/// The vector features of this CPU that ossa's kernels use, as detected at run time.
fn vector_features() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        let detected = [
            ("sse2", std::arch::is_x86_feature_detected!("sse2")),
            ("avx", std::arch::is_x86_feature_detected!("avx")),
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("fma", std::arch::is_x86_feature_detected!("fma")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
            ("avx512vl", std::arch::is_x86_feature_detected!("avx512vl")),
            ("avx512bw", std::arch::is_x86_feature_detected!("avx512bw")),
            ("avx512dq", std::arch::is_x86_feature_detected!("avx512dq")),
        ];
        let names: Vec<&str> = detected
            .iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| *name)
            .collect();
        format!("vector features {}", names.join(" "))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        "no x86 vector features".to_owned()
    }
}

/// Jiffies of the whole machine and of this process, to tell how busy other processes kept the
/// CPUs while the table was measured (the two-thread figures need an otherwise idle machine).
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
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 && a.is_finite() {
        format!("{:.2}x", a / b)
    } else {
        "-".to_owned()
    }
}

fn num(x: f64) -> String {
    if !x.is_finite() {
        "-".to_owned()
    } else if x < 10.0 {
        format!("{x:.2}")
    } else if x < 1000.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.0}")
    }
}

fn sci(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1e}")
    } else {
        "-".to_owned()
    }
}

/// A table printed a row at a time: the first column left-aligned, the others right-aligned.
struct Table {
    widths: Vec<usize>,
}

impl Table {
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

/// Cuts packed position and normal buffers into one part per mesh, meshes one after another,
/// and each part at `cut(mesh, vertices)` into a part for each of two threads.
fn parts<'a>(
    mesh_vertices: &[usize],
    mut positions: &'a mut [f32],
    mut normals: &'a mut [f32],
    cut: impl Fn(usize, usize) -> usize,
) -> (Vec<Part<'a>>, Vec<Part<'a>>) {
    let (mut low, mut high) = (Vec::new(), Vec::new());
    for (mesh, &count) in mesh_vertices.iter().enumerate() {
        let (p, p_rest) = std::mem::take(&mut positions).split_at_mut(count * 3);
        let (n, n_rest) = std::mem::take(&mut normals).split_at_mut(count * 3);
        (positions, normals) = (p_rest, n_rest);
        let at = cut(mesh, count).min(count);
        let (p_low, p_high) = p.split_at_mut(at * 3);
        let (n_low, n_high) = n.split_at_mut(at * 3);
        low.push(Part {
            mesh,
            first: 0,
            positions: p_low,
            normals: n_low,
        });
        high.push(Part {
            mesh,
            first: at,
            positions: p_high,
            normals: n_high,
        });
    }
    (low, high)
}

/// Skins every part (positions and normals, no flags) with `kernel`; a failure aborts, since
/// a measurement cannot go on without it.
fn skin_parts(model: &Model, kernel: Kernel, bones: &[Mat3x4], parts: &mut [Part<'_>]) {
    for part in parts {
        let count = part.positions.len() / 3;
        let done = Strided::new(&mut *part.positions, 3)
            .and_then(|t| t.with_normals(&mut *part.normals, 3))
            .and_then(|mut t| {
                model.skin_mesh_with(kernel, part.mesh, bones, part.first, count, 0, &mut t)
            });
        if let Err(e) = done {
            eprintln!("skinning failed: {e}");
            std::process::abort();
        }
    }
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

/// Two threads: this one skins `mine`, a helper that lives for the whole measurement skins
/// `theirs`, started per call through an atomic counter and unpark (spawning a thread per call
/// would cost more than skinning a small model).
fn measure_two_threads(
    config: &Config,
    model: &Model,
    kernel: Kernel,
    bones: &[Mat3x4],
    mine: &mut [Part<'_>],
    theirs: &mut [Part<'_>],
) -> f64 {
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
                skin_parts(model, kernel, bones, theirs);
                finished.store(seen, Ordering::Release);
                main.unpark();
            }
        });
        let helper = helper.thread();
        let round = Cell::new(0u64);
        let ns = measure(config, || {
            round.set(round.get() + 1);
            started.store(round.get(), Ordering::Release);
            helper.unpark();
            skin_parts(model, kernel, bones, mine);
            wait_for(|| finished.load(Ordering::Acquire) == round.get());
        });
        stop.store(true, Ordering::Release);
        helper.unpark();
        ns
    })
}

/// The largest differences between two outputs: positions over the model's size, and normals
/// as they are (unit scale).
fn max_diff(size: f32, a: (&[f32], &[f32]), b: (&[f32], &[f32])) -> (f64, f64) {
    let d = |x: &[f32], y: &[f32]| {
        x.iter()
            .zip(y)
            .map(|(x, y)| f64::from((x - y).abs()))
            .fold(0.0, f64::max)
    };
    (d(a.0, b.0) / f64::from(size), d(a.1, b.1))
}

// ---- the measurements ----

/// One model's figures, nanoseconds unless said otherwise.
struct Row {
    load: f64,
    memcpy: f64,
    /// `Model::optimized(OPTIMIZE_SKIN_ORDER)` of the loaded model.
    reorder: f64,
    heap: usize,
    pose_per_bone: f64,
    skin: f64,
    copy: f64,
    baseline: Option<f64>,
    baseline_diff: Option<(f64, f64)>,
    /// The lower bound's parts: `pose * inverse bind`, blends and transforms, where the CPU has
    /// AVX2 and FMA.
    bound: Option<[f64; 3]>,
    two_threads: f64,
    kernels: Vec<(Kernel, f64, (f64, f64))>,
    /// ossa beside DarkPlaces' SSE skinning; Err says why it was not measured.
    dp: Result<DpRow, String>,
}

/// dp_sse.c built with DarkPlaces' release flags, as shipped, and with `-march=native` added.
struct DpSse {
    shipped: Result<Sse, String>,
    native: Result<Sse, String>,
}

/// The operations [`measure_dp`] times in each round, by their index in [`Paired`].
const OSSA: usize = 0;
const OSSA_INTERLEAVED: usize = 1;
const SSE_SHIPPED: usize = 2;
const SSE_NATIVE: usize = 3;
const EXACT: usize = 4;
/// ossa on the model with OSSA_OPTIMIZE_SKIN_ORDER, packed and interleaved.
const GROUPED: usize = 5;
const GROUPED_INTERLEAVED: usize = 6;
const SCALAR: usize = 7;

/// ossa beside DarkPlaces' SSE skinning, per thread CPU time.
struct DpRow {
    paired: Paired,
    /// Unique sets of DarkPlaces' 4 byte weights, and of every influence with its float weight.
    sets: u32,
    exact_sets: u32,
    /// Largest differences from ossa's packed output (positions over the model's size, normals
    /// as they are) of DarkPlaces' 4 byte weights (native build), and of the exact palette.
    diff: (f64, f64),
    exact_diff: (f64, f64),
    scalar: bool,
}

fn measure_subject(
    config: &Config,
    s: &Subject,
    baseline: Option<&Baseline>,
    sse: &DpSse,
) -> Result<Row, String> {
    let model = &s.model;
    let load = measure(config, || {
        black_box(Subject::load(&s.file_name, &s.files).ok());
    });
    let all_bytes: Vec<u8> = s.files.files.values().flatten().copied().collect();
    let mut buffer = vec![0u8; all_bytes.len()];
    let memcpy = measure(config, || {
        buffer.copy_from_slice(black_box(&all_bytes));
        black_box(&mut buffer);
    });

    let reorder = measure(config, || {
        black_box(model.optimized(ossa::optimize::OPTIMIZE_SKIN_ORDER).ok());
    });

    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    let blend = s.two_frame_blend();
    // A root that turns and moves the model, so that no bone's matrix is the identity, even in
    // a one-frame model's only pose.
    let root = Mat3x4::from_rotation_translation(glam::Quat::from_rotation_z(0.3), [1.0, 2.0, 3.0]);
    model
        .pose_frames(&blend, Some(&root), &mut bones)
        .map_err(|e| format!("cannot be posed: {e}"))?;
    let pose = measure(config, || {
        let r = model.pose_frames(black_box(&blend), Some(&root), &mut bones);
        black_box((&r, &mut bones));
    });

    let floats = s.vertices * 3;
    let (mut position_buffer, mut normal_buffer) = (Aligned::new(floats), Aligned::new(floats));
    let positions = position_buffer.slice();
    let normals = normal_buffer.slice();
    let run_kernel = |kernel: Kernel, positions: &mut [f32], normals: &mut [f32]| {
        let (mut all, _) = parts(&s.mesh_vertices, positions, normals, |_, n| n);
        measure(config, || {
            skin_parts(model, kernel, &bones, black_box(&mut all))
        })
    };
    let mut kernels = Vec::new();
    let mut reference: Option<(Vec<f32>, Vec<f32>)> = None;
    for kernel in Kernel::available() {
        let ns = run_kernel(kernel, positions, normals);
        let diff = reference.as_ref().map_or((0.0, 0.0), |r| {
            max_diff(s.size(), (&r.0, &r.1), (positions, normals))
        });
        if reference.is_none() {
            reference = Some((positions.to_vec(), normals.to_vec()));
        }
        kernels.push((kernel, ns, diff));
    }
    let kernel = Kernel::selected();
    let skin = run_kernel(kernel, positions, normals);
    let ours = (positions.to_vec(), normals.to_vec());

    let source: Vec<f32> = (0..floats * 2).map(|i| i as f32).collect();
    let (src_p, src_n) = source.split_at(floats);
    let copy = measure(config, || {
        positions.copy_from_slice(black_box(src_p));
        normals.copy_from_slice(black_box(src_n));
        black_box((&mut *positions, &mut *normals));
    });

    let (mut baseline_ns, mut baseline_diff, mut bound) = (None, None, None);
    if let Some(b) = baseline {
        let prepared = b.prepare(model).map_err(|e| format!("C baseline: {e}"))?;
        positions.fill(f32::NAN);
        normals.fill(f32::NAN);
        baseline_ns = Some(measure(config, || {
            prepared.skin(black_box(&bones), positions, normals);
        }));
        baseline_diff = Some(max_diff(s.size(), (&ours.0, &ours.1), (positions, normals)));
        if let Ok(twin) = one_matrix_twin(model)
            && prepared.bound_relative(&bones)
            && prepared.bound_blends(false)
        {
            let relative = measure(config, || {
                black_box(prepared.bound_relative(black_box(&bones)));
            });
            let blends = [false, true].map(|grouped| {
                measure(config, || {
                    black_box(prepared.bound_blends(grouped));
                })
            });
            let blends = blends[0].min(blends[1]);
            let (mut all, _) = parts(&s.mesh_vertices, positions, normals, |_, n| n);
            let transforms = measure(config, || {
                skin_parts(&twin, kernel, &bones, black_box(&mut all))
            });
            bound = Some([relative, blends, transforms]);
        }
    }

    let dp = match (&sse.shipped, &sse.native) {
        (Ok(shipped), Ok(native)) => {
            let (kind, ours) = (kernel, (&ours.0[..], &ours.1[..]));
            measure_dp(config, s, &bones, kind, ours, [shipped, native], baseline)
        }
        (Err(e), _) | (_, Err(e)) => Err(format!("dp_sse.c not built: {e}")),
    };

    positions.fill(f32::NAN);
    normals.fill(f32::NAN);
    // Halves of equal work by the layout's estimate, cut where a cache line starts: the mesh's
    // own cut, moved by where the mesh starts in the shared buffers.
    let starts: Vec<usize> = s
        .mesh_vertices
        .iter()
        .scan(0, |at, &n| {
            *at += n;
            Some(*at - n)
        })
        .collect();
    let (mut low, mut high) = parts(&s.mesh_vertices, positions, normals, |mesh, n| {
        let cut = model.meshes()[mesh].skin_split(2)[1];
        let grain = ossa::skin::SKIN_SPLIT_GRAIN;
        let shift = (grain - starts[mesh] % grain) % grain;
        (cut + shift).min(n)
    });
    let two_threads = measure_two_threads(config, model, kernel, &bones, &mut low, &mut high);
    drop((low, high));
    if !(same_bits(positions, &ours.0) && same_bits(normals, &ours.1)) {
        return Err("two threads wrote different output than one thread".to_owned());
    }

    Ok(Row {
        load,
        memcpy,
        reorder,
        heap: model.heap_bytes(),
        pose_per_bone: pose / model.bones().len().max(1) as f64,
        skin,
        copy,
        baseline: baseline_ns,
        baseline_diff,
        bound,
        two_threads,
        kernels,
        dp,
    })
}

/// Times ossa (packed buffers, and one interleaved 24-byte buffer) against dp_sse.c's two
/// builds, its exact palette (native build) and the scalar baseline, all in the same rounds, and
/// compares their output with ossa's (`ours`, packed positions and normals of every mesh).
fn measure_dp(
    config: &Config,
    s: &Subject,
    bones: &[Mat3x4],
    kernel: Kernel,
    ours: (&[f32], &[f32]),
    [shipped, native]: [&Sse; 2],
    scalar: Option<&Baseline>,
) -> Result<DpRow, String> {
    let model = &s.model;
    let floats = s.vertices * 3;
    let dp = |e: String| format!("dp_sse.c: {e}");
    let four_shipped = shipped.prepare(model, false).map_err(dp)?;
    let four_native = native.prepare(model, false).map_err(dp)?;
    let exact = native.prepare(model, true).map_err(dp)?;
    let scalar = match scalar {
        Some(b) => Some(b.prepare(model).map_err(|e| format!("C baseline: {e}"))?),
        None => None,
    };
    let mut buffers: Vec<Aligned> = (0..10).map(|_| Aligned::new(floats)).collect();
    let mut interleaved = Aligned::new(floats * 2);
    let il = interleaved.slice();
    let [p0, n0, p1, n1, p2, n2, p3, n3, p4, n4] = &mut buffers[..] else {
        unreachable!("ten buffers");
    };
    let (p0, n0, p1, n1) = (p0.slice(), n0.slice(), p1.slice(), n1.slice());
    let (p2, n2, p3, n3, p4, n4) = (
        p2.slice(),
        n2.slice(),
        p3.slice(),
        n3.slice(),
        p4.slice(),
        n4.slice(),
    );

    four_native.skin(bones, p2, n2);
    let diff = max_diff(s.size(), ours, (p2, n2));
    four_shipped.skin(bones, p1, n1);
    let (shipped_p, shipped_n) = max_diff(s.size(), (p1, n1), (p2, n2));
    if shipped_p > 1e-5 || shipped_n > 1e-5 {
        return Err(format!(
            "dp_sse.c's two builds differ by {shipped_p:.1e} (positions), {shipped_n:.1e} (normals)"
        ));
    }
    exact.skin(bones, p3, n3);
    let exact_diff = max_diff(s.size(), ours, (p3, n3));
    skin_interleaved(model, kernel, bones, &s.mesh_vertices, il);
    let (il_p, il_n): (Vec<f32>, Vec<f32>) = (
        il.chunks(6).flat_map(|v| v[..3].to_vec()).collect(),
        il.chunks(6).flat_map(|v| v[3..].to_vec()).collect(),
    );
    let (d_p, d_n) = max_diff(s.size(), ours, (&il_p, &il_n));
    if d_p > 1e-5 || d_n > 1e-5 {
        return Err(format!(
            "ossa's interleaved output differs from its packed output by {d_p:.1e}, {d_n:.1e}"
        ));
    }

    let (grouped, _) = model
        .optimized(ossa::optimize::OPTIMIZE_SKIN_ORDER)
        .map_err(|e| format!("skin order: {e}"))?;
    let mut grouped_p = Aligned::new(floats);
    let mut grouped_n = Aligned::new(floats);
    let mut grouped_il = Aligned::new(floats * 2);
    let (mut grouped_all, _) = parts(
        &s.mesh_vertices,
        grouped_p.slice(),
        grouped_n.slice(),
        |_, n| n,
    );
    let grouped_il = grouped_il.slice();
    let mut ossa_grouped = || skin_parts(&grouped, kernel, bones, black_box(&mut grouped_all));
    let mut ossa_grouped_interleaved = || {
        skin_interleaved(
            &grouped,
            kernel,
            bones,
            &s.mesh_vertices,
            black_box(&mut *grouped_il),
        )
    };
    let (mut all, _) = parts(&s.mesh_vertices, p0, n0, |_, n| n);
    let mut ossa = || skin_parts(model, kernel, bones, black_box(&mut all));
    let mut ossa_interleaved =
        || skin_interleaved(model, kernel, bones, &s.mesh_vertices, black_box(&mut *il));
    let mut sse_shipped = || four_shipped.skin(black_box(bones), p1, n1);
    let mut sse_native = || four_native.skin(black_box(bones), p2, n2);
    let mut sse_exact = || exact.skin(black_box(bones), p3, n3);
    let mut scalar_dp = || {
        if let Some(b) = &scalar {
            b.skin(black_box(bones), p4, n4);
        }
    };
    let mut ops: Vec<&mut dyn FnMut()> = vec![
        &mut ossa,
        &mut ossa_interleaved,
        &mut sse_shipped,
        &mut sse_native,
        &mut sse_exact,
        &mut ossa_grouped,
        &mut ossa_grouped_interleaved,
    ];
    let has_scalar = scalar.is_some();
    if has_scalar {
        ops.push(&mut scalar_dp);
    }
    let paired = measure_paired(config, &mut ops);
    drop(ops);
    Ok(DpRow {
        paired,
        sets: four_native.sets(),
        exact_sets: exact.sets(),
        diff,
        exact_diff,
        scalar: has_scalar,
    })
}

/// Skins every mesh into one buffer of 24 bytes a vertex, the position then the normal, meshes
/// one after another; a failure aborts.
fn skin_interleaved(
    model: &Model,
    kernel: Kernel,
    bones: &[Mat3x4],
    mesh_vertices: &[usize],
    buffer: &mut [f32],
) {
    let mut rest = buffer;
    for (mesh, &count) in mesh_vertices.iter().enumerate() {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(count * 6);
        rest = tail;
        let done = Interleaved::new(part, 6, 0, Some(3))
            .and_then(|mut t| model.skin_mesh_with(kernel, mesh, bones, 0, count, 0, &mut t));
        if let Err(e) = done {
            eprintln!("skinning failed: {e}");
            std::process::abort();
        }
    }
}

/// `model` with every vertex following bone 0 alone, at its first influence's point: skinned,
/// each mesh is one run of vertices sharing a matrix, the fastest transform ossa has.
fn one_matrix_twin(model: &Model) -> Result<Model, String> {
    let mut parts = model.to_parts();
    for mesh in &mut parts.meshes {
        let starts = &mesh.influence_start;
        let twin: Vec<Influence> = starts
            .iter()
            .take(starts.len().saturating_sub(1))
            .map(|&at| Influence {
                bone: 0,
                weight: 1.0,
                ..mesh.influences[at as usize]
            })
            .collect();
        mesh.influence_start = (0..=twin.len() as u32).collect();
        mesh.influences = twin;
    }
    Model::from_parts(parts).map_err(|e| format!("one-matrix twin: {e}"))
}

/// A float buffer whose first float starts a cache line.
struct Aligned {
    buffer: Vec<f32>,
    len: usize,
}

impl Aligned {
    /// `len` floats, NaN.
    fn new(len: usize) -> Aligned {
        Aligned {
            buffer: vec![f32::NAN; len + CACHE_LINE / 4],
            len,
        }
    }

    fn slice(&mut self) -> &mut [f32] {
        let skip = self.buffer.as_ptr().align_offset(CACHE_LINE);
        &mut self.buffer[skip..skip + self.len]
    }
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Runs a benchmark command: `args` are its arguments, `command` how its usage starts, and
/// `test_run` says that `cargo test` may run it (then it runs short unless cargo bench said
/// `--bench`).
pub fn main(args: impl Iterator<Item = String>, command: &str, test_run: bool) -> ExitCode {
    match Config::from_args(args, test_run) {
        Ok(config) => match run(&config) {
            Ok(()) => ExitCode::SUCCESS,
            Err(errors) => {
                for e in errors {
                    eprintln!("{command}: {e}");
                }
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            if !e.is_empty() {
                eprintln!("{command}: {e}");
            }
            eprintln!("usage: {command} ARGUMENTS\n{USAGE}");
            ExitCode::from(if e.is_empty() { 0 } else { 2 })
        }
    }
}

/// The load average of /proc/loadavg: runnable processes over the last 1, 5 and 15 minutes.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// "0.85x 0.80-0.90": a median ratio and its spread over the rounds.
fn spread(r: [f64; 3]) -> String {
    if r.iter().all(|x| x.is_finite()) {
        format!("{:.2}x {:.2}-{:.2}", r[0], r[1], r[2])
    } else {
        "-".to_owned()
    }
}

/// The table of ossa against DarkPlaces' SSE skinning.
fn print_dp_table(
    name_width: usize,
    rows: Vec<(String, usize, Result<DpRow, String>)>,
    load_before: &str,
) {
    let table = Table::start(
        &[
            "ossa against DarkPlaces' default CPU skinning (benches/baseline/dp_sse.c), whole model, positions and",
            "normals, one thread; per thread CPU time (CLOCK_THREAD_CPUTIME_ID); in every round ossa and each",
            "baseline run one after another; a ratio is the median over the rounds of ossa's time / the other's in",
            "the same round, then the least and largest round. ossa = packed buffers, il = ossa into one",
            "interleaved 24-byte buffer; grp = the model with OSSA_OPTIMIZE_SKIN_ORDER (each influence",
            "set's vertices together), packed and interleaved; SSE O3 = dp_sse.c with DarkPlaces' release flags, as shipped; SSE nat =",
            "the same with -march=native; exact = dp_sse.c's kernel with every influence and its float weight",
            "(native build); scalar = dp_skin.c, a scalar rendering of DarkPlaces' generic path, exact, -O2.",
            "sets = unique sets of 4 byte weights (exact: of all float weights); 4i / ex diff = largest",
            "difference from ossa of SSE nat / exact (positions over the model's size, normals as they are);",
            "wall/cpu above 1.00 = the scheduler gave this thread's CPU to other work while it was measured",
        ],
        name_width,
        &[
            ("verts", 6),
            ("sets", 5),
            ("ex sets", 0),
            ("ossa ns/v", 0),
            ("SSE nat ns/v", 0),
            ("ossa/SSE O3", 17),
            ("ossa/SSE nat", 17),
            ("ossa/exact", 17),
            ("ossa/scalar", 17),
            ("il/SSE nat", 17),
            ("grp ns/v", 0),
            ("grp/SSE nat", 17),
            ("grp il/SSE nat", 17),
            ("4i p diff", 7),
            ("4i n diff", 7),
            ("ex p diff", 7),
            ("ex n diff", 7),
            ("rounds", 0),
            ("wall/cpu", 0),
        ],
    );
    let mut worst_wall_over_cpu: f64 = 0.0;
    for (name, vertices, dp) in rows {
        let r = match dp {
            Ok(r) => r,
            Err(e) => {
                println!("{name}: {e}");
                continue;
            }
        };
        let per_vertex = 1.0 / vertices.max(1) as f64;
        let p = &r.paired;
        worst_wall_over_cpu = worst_wall_over_cpu.max(p.wall_over_cpu);
        table.row(&[
            name,
            vertices.to_string(),
            r.sets.to_string(),
            r.exact_sets.to_string(),
            num(p.ns(OSSA) * per_vertex),
            num(p.ns(SSE_NATIVE) * per_vertex),
            spread(p.ratio(OSSA, SSE_SHIPPED)),
            spread(p.ratio(OSSA, SSE_NATIVE)),
            spread(p.ratio(OSSA, EXACT)),
            if r.scalar {
                spread(p.ratio(OSSA, SCALAR))
            } else {
                "-".to_owned()
            },
            spread(p.ratio(OSSA_INTERLEAVED, SSE_NATIVE)),
            num(p.ns(GROUPED) * per_vertex),
            spread(p.ratio(GROUPED, SSE_NATIVE)),
            spread(p.ratio(GROUPED_INTERLEAVED, SSE_NATIVE)),
            sci(r.diff.0),
            sci(r.diff.1),
            sci(r.exact_diff.0),
            sci(r.exact_diff.1),
            p.rounds.to_string(),
            format!("{:.2}", p.wall_over_cpu),
        ]);
    }
    let load_after = load_average();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let busy_load = [load_before, load_after.as_str()]
        .iter()
        .filter_map(|l| l.split_whitespace().next()?.parse::<f64>().ok())
        .any(|one_minute| one_minute > cpus - 0.5);
    let verdict = if busy_load || worst_wall_over_cpu > 1.05 {
        "the machine was busy: CPU time leaves out time other work took from this thread, not the caches \
         and memory bandwidth it shared; take the ratios as rough"
    } else {
        "the machine was otherwise idle"
    };
    println!(
        "load average (1, 5, 15 min) before: {load_before}; after: {load_after}; largest wall/cpu \
         {worst_wall_over_cpu:.2}: {verdict}"
    );
}

/// Measures every selected model and prints the tables; fails, before measuring anything, when
/// a file given does not load or nothing is left to measure.
fn run(config: &Config) -> Result<(), Vec<String>> {
    let subjects = subjects(config)?;
    let baseline = Baseline::build();
    let sse = DpSse {
        shipped: Sse::build(&[]),
        native: Sse::build(&["-march=native"]),
    };
    let load_before = load_average();
    println!(
        "ossa {} bench on {}; skinning kernel {} ({} available); {} ms warm-up + {} ms per \
         measurement{}; figures are medians",
        env!("CARGO_PKG_VERSION"),
        machine(),
        Kernel::selected().name(),
        Kernel::available()
            .map(Kernel::name)
            .collect::<Vec<_>>()
            .join(", "),
        config.warmup.as_millis(),
        config.budget.as_millis(),
        if config.quick { " (--quick)" } else { "" },
    );
    match &baseline {
        Ok(b) => println!("C baseline: {}", b.description()),
        Err(why) => println!("C baseline: not built ({why})"),
    }
    for (what, build) in [("as shipped", &sse.shipped), ("native", &sse.native)] {
        match build {
            Ok(b) => println!(
                "DarkPlaces SSE ({what}): benches/baseline/dp_sse.c built with {}",
                b.flags()
            ),
            Err(why) => println!("DarkPlaces SSE ({what}): not built ({why})"),
        }
    }
    let name_width = subjects
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    let table = Table::start(
        &[
            "load, pose and skin, one line per model",
            "load = Model::load from memory (sidecars too), memcpy = copying those bytes; heap = Model::heap_bytes();",
            "reorder/load = Model::optimized(OPTIMIZE_SKIN_ORDER) of the loaded model over its load",
            "pose = Model::pose_frames of a two-frame blend under a root that turns the model; skin = every mesh in that",
            "pose, positions and normals, every influence, one thread, into packed buffers; copy = copying those 24",
            "bytes per vertex; C = dp_skin.c, a scalar -O2 rendering of DarkPlaces' generic path, exact (DarkPlaces",
            "runs its SSE path: see the next table); 2T = skin speed-up on two threads (Mesh::skin_split's",
            "halves of equal estimated work, cut on a cache line; one resident helper thread); p diff, n diff = largest",
            "difference between ossa and the baseline: positions over the model's size, normals as they are",
        ],
        name_width,
        &[
            ("verts", 6),
            ("infl/v", 4),
            ("load", 8),
            ("memcpy", 8),
            ("load/copy", 0),
            ("reorder/load", 0),
            ("heap/file", 0),
            ("pose ns/bone", 0),
            ("skin ns/v", 0),
            ("copy ns/v", 0),
            ("C ns/v", 0),
            ("skin/C", 0),
            ("skin/copy", 0),
            ("2T", 0),
            ("p diff", 7),
            ("n diff", 7),
        ],
    );
    let meter = CpuMeter::now();
    let mut kernel_rows = Vec::new();
    let mut bound_rows = Vec::new();
    let mut dp_rows = Vec::new();
    for s in &subjects {
        let r = match measure_subject(config, s, baseline.as_ref().ok(), &sse) {
            Ok(r) => r,
            Err(e) => {
                println!("{}: {e}", s.name);
                continue;
            }
        };
        let per_vertex = 1.0 / s.vertices.max(1) as f64;
        let c = r.baseline.map_or(f64::NAN, |b| b * per_vertex);
        table.row(&[
            s.name.clone(),
            s.vertices.to_string(),
            format!("{:.2}", s.influences as f64 / s.vertices.max(1) as f64),
            time(r.load),
            time(r.memcpy),
            ratio(r.load, r.memcpy),
            ratio(r.reorder, r.load),
            ratio(r.heap as f64, s.bytes as f64),
            num(r.pose_per_bone),
            num(r.skin * per_vertex),
            num(r.copy * per_vertex),
            num(c),
            ratio(r.skin * per_vertex, c),
            ratio(r.skin, r.copy),
            ratio(r.skin, r.two_threads),
            sci(r.baseline_diff.map_or(f64::NAN, |d| d.0)),
            sci(r.baseline_diff.map_or(f64::NAN, |d| d.1)),
        ]);
        kernel_rows.push((s.name.clone(), s.vertices, r.kernels));
        dp_rows.push((s.name.clone(), s.vertices, r.dp));
        if let Some(bound) = r.bound {
            bound_rows.push((s.name.clone(), s.vertices, bound, r.skin, r.copy));
        }
    }
    println!("{}", CpuMeter::report(&meter));
    print_dp_table(name_width, dp_rows, &load_before);

    let mut columns = vec![("verts", 6)];
    let names: Vec<String> = Kernel::available()
        .flat_map(|k| {
            [
                format!("{} ns/v", k.name()),
                "p diff".to_owned(),
                "n diff".to_owned(),
            ]
        })
        .collect();
    columns.extend(names.iter().map(|n| (n.as_str(), 7)));
    let table = Table::start(
        &[
            "skinning kernels, one thread, ns per vertex; p diff, n diff = largest difference from the portable",
            "kernel (positions over the model's size, normals as they are)",
        ],
        name_width,
        &columns,
    );
    for (name, vertices, kernels) in kernel_rows {
        let mut row = vec![name, vertices.to_string()];
        for (_, ns, diff) in kernels {
            row.push(num(ns / vertices.max(1) as f64));
            row.push(sci(diff.0));
            row.push(sci(diff.1));
        }
        table.row(&row);
    }

    if bound_rows.is_empty() {
        println!(
            "\nlower bound: not measured (it needs the C baseline and a CPU with AVX2 and FMA)"
        );
        return Ok(());
    }
    let table = Table::start(
        &[
            "a lower bound for exact palette skinning, ns per vertex, each part measured alone: relative = pose",
            "* inverse bind for the bones the sets use; blends = one blend per distinct set of influences, the",
            "faster of two ways (both in benches/baseline/dp_skin.c, AVX2); transforms = ossa skinning the same",
            "vertices into the same buffers with one matrix for all, its fastest transform (runs); bound = their",
            "sum, which leaves out reading each vertex's matrix",
        ],
        name_width,
        &[
            ("verts", 6),
            ("relative", 0),
            ("blends", 0),
            ("transforms", 0),
            ("bound", 0),
            ("bound/copy", 0),
            ("skin/bound", 0),
        ],
    );
    for (name, vertices, parts, skin, copy) in bound_rows {
        let per_vertex = 1.0 / vertices.max(1) as f64;
        let bound: f64 = parts.iter().sum();
        let mut row = vec![name, vertices.to_string()];
        row.extend(parts.iter().map(|ns| num(ns * per_vertex)));
        row.extend([
            num(bound * per_vertex),
            ratio(bound, copy),
            ratio(skin, bound),
        ]);
        table.row(&row);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    // Imported in the test: the bench target, without a test harness, drops the function.
    #[test]
    fn a_word_selects_default_models_by_name_or_by_format() {
        use super::{Config, names_format};
        let args = ["IQM", "zombie", "gltf"].map(String::from);
        let config = Config::from_args(args.into_iter(), false).unwrap();
        assert!(config.filters.iter().eq(["iqm", "zombie", "gltf"].iter()));
        assert!(config.selects("asp_mrfixit", "/corpus/iqm/asp_mrfixit.IQM"));
        assert!(config.selects("zombie", "/corpus/dpm/zombie.dpm"));
        assert!(config.selects("cube", "cube.glb"));
        assert!(!config.selects("okrobot", "/corpus/dpm/okrobot.dpm"));
        assert!(!config.selects("synth_tube", "synth_tube.dpm"));
        let dpm = Config::from_args(["dpm".to_owned()].into_iter(), false).unwrap();
        assert!(dpm.selects("synth_tube", "synth_tube.dpm"));
        assert!(!dpm.selects("hand", "/corpus/skm/hand.skm"));

        // Extensions and words of the formats' names.
        use ossa::Format as F;
        for (word, format) in [
            ("dpm", F::Dpm),
            ("skm", F::Skm),
            ("iqm", F::Iqm),
            ("gltf", F::Gltf),
            ("gltf", F::Glb),
            ("glb", F::Glb),
            ("cmx", F::SimsCmx),
            ("dmf", F::Dmf),
            ("skel", F::Mm2Skel),
            ("mod", F::Mm2Mod),
            ("msh", F::SimsMsh),
            ("sims", F::SimsSkn),
        ] {
            assert!(names_format(word, format), "{word} {format:?}");
        }
        for (word, format) in [("glb", F::Gltf), ("dpm", F::Skm), ("iq", F::Iqm)] {
            assert!(!names_format(word, format), "{word} {format:?}");
        }
    }
}
