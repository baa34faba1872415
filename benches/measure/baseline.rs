//! The C baselines, compiled at run time with the system's C compiler into shared objects and
//! loaded with `dlopen`, so that neither the library nor the benchmark's build needs a C
//! compiler: without one, the tables say the baseline was not built and go on.
//! `benches/baseline/dp_skin.c` (a scalar rendering of DarkPlaces' generic path, exact) is built
//! at `-O2`; `benches/baseline/dp_sse.c` (DarkPlaces' SSE path, its default) with DarkPlaces'
//! release flags, and again with `-march=native` added.

use std::ffi::{CString, c_void};
use std::path::PathBuf;

use ossa::{Influence, Mat3x4, Model};

/// The sources, carried in the binary so that `ossa bench` works away from the source tree.
const SOURCE: &str = include_str!("../baseline/dp_skin.c");
const SSE_SOURCE: &str = include_str!("../baseline/dp_sse.c");

/// DarkPlaces' release flags for its engine (its makefile's optimised build).
pub const DP_RELEASE_FLAGS: [&str; 3] = ["-O3", "-fno-math-errno", "-fno-trapping-math"];

/// Writes `source` into `dir` as `name`.c, compiles it with `flags` into a shared object and
/// loads it; the handle stays open for the life of the process.
fn compile(
    compiler: &str,
    dir: &std::path::Path,
    name: &str,
    source: &str,
    flags: &[&str],
) -> Result<*mut c_void, String> {
    let source_path = dir.join(format!("{name}.c"));
    let object: PathBuf = dir.join(format!("{name}.so"));
    std::fs::write(&source_path, source).map_err(|e| format!("{}: {e}", source_path.display()))?;
    let output = std::process::Command::new(compiler)
        .args(flags)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&object)
        .arg(&source_path)
        .output()
        .map_err(|e| format!("{compiler}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{compiler} {} failed: {}",
            flags.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let path = CString::new(object.to_string_lossy().into_owned())
        .map_err(|_| "temporary path holds a NUL".to_owned())?;
    // SAFETY: `path` is a NUL-terminated string; the object is the one just compiled, whose
    // initialisers do nothing. The handle is never closed: the functions stay valid for the
    // life of the process.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(format!("dlopen of {name}.so failed"));
    }
    Ok(handle)
}

/// `name` in a handle [`compile`] returned.
fn symbol(handle: *mut c_void, name: &str) -> Result<*mut c_void, String> {
    let c = CString::new(name).map_err(|_| "symbol name holds a NUL".to_owned())?;
    // SAFETY: `handle` is a live handle from dlopen and `c` a NUL-terminated name.
    let f = unsafe { libc::dlsym(handle, c.as_ptr()) };
    if f.is_null() {
        Err(format!("{name} not found in the compiled baseline"))
    } else {
        Ok(f)
    }
}

type Prepare = unsafe extern "C" fn(
    u32,
    *const u32,
    *const Influence,
    u32,
    *const f32,
    *const f32,
) -> *mut c_void;
type Skin = unsafe extern "C" fn(*mut c_void, *const f32, *mut f32, *mut f32);
type Free = unsafe extern "C" fn(*mut c_void);
type BoundRelative = unsafe extern "C" fn(*mut c_void, *const f32) -> i32;
type BoundBlends = unsafe extern "C" fn(*mut c_void, i32) -> i32;

pub struct Baseline {
    compiler: String,
    prepare: Prepare,
    skin: Skin,
    free: Free,
    bound_relative: BoundRelative,
    bound_blends: BoundBlends,
}

/// One model prepared by the baseline: one C object per mesh.
pub struct Prepared<'a> {
    baseline: &'a Baseline,
    meshes: Vec<(*mut c_void, usize)>,
}

impl Baseline {
    /// Writes the source to a temporary directory, compiles it with `$CC` (default `cc`) and
    /// loads it; the error says what failed.
    pub fn build() -> Result<Baseline, String> {
        let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
        let dir = std::env::temp_dir().join(format!("ossa-baseline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let result = Baseline::compile_and_load(&compiler, &dir);
        // The loaded object stays mapped after its file is gone.
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    fn compile_and_load(compiler: &str, dir: &std::path::Path) -> Result<Baseline, String> {
        let handle = compile(compiler, dir, "dp_skin", SOURCE, &["-O2"])?;
        let symbol = |name: &str| symbol(handle, name);
        let (prepare, skin, free) = (
            symbol("dp_skin_prepare")?,
            symbol("dp_skin")?,
            symbol("dp_skin_free")?,
        );
        let (bound_relative, bound_blends) =
            (symbol("dp_bound_relative")?, symbol("dp_bound_blends")?);
        // SAFETY: the five symbols are the functions dp_skin.c defines with exactly these
        // signatures (dp_influence is Influence's repr(C) layout; matrices are 12 floats).
        unsafe {
            Ok(Baseline {
                compiler: compiler.to_owned(),
                prepare: std::mem::transmute::<*mut c_void, Prepare>(prepare),
                skin: std::mem::transmute::<*mut c_void, Skin>(skin),
                free: std::mem::transmute::<*mut c_void, Free>(free),
                bound_relative: std::mem::transmute::<*mut c_void, BoundRelative>(bound_relative),
                bound_blends: std::mem::transmute::<*mut c_void, BoundBlends>(bound_blends),
            })
        }
    }

    pub fn description(&self) -> String {
        format!(
            "benches/baseline/dp_skin.c built with {} -O2",
            self.compiler
        )
    }

    /// Prepares every mesh of a bound model.
    pub fn prepare(&self, model: &Model) -> Result<Prepared<'_>, String> {
        let mut prepared = Prepared {
            baseline: self,
            meshes: Vec::new(),
        };
        let bind = model.skeleton().bind_pose();
        let inverse = model.skeleton().inverse_bind();
        for (i, mesh) in model.meshes().iter().enumerate() {
            let vertices = mesh.vertex_count();
            let starts: Vec<u32> = (0..=vertices)
                .scan(0u32, |at, v| {
                    let s = *at;
                    *at += mesh.influences(v).len() as u32;
                    Some(s)
                })
                .collect();
            // SAFETY: `starts` has vertices + 1 entries indexing the mesh's influences, whose
            // bones are below the bone count; bind and inverse hold 12 floats per bone. The
            // function only reads them.
            let handle = unsafe {
                (self.prepare)(
                    vertices as u32,
                    starts.as_ptr(),
                    mesh.all_influences().as_ptr(),
                    bind.len() as u32,
                    bind.as_ptr().cast(),
                    inverse.as_ptr().cast(),
                )
            };
            if handle.is_null() {
                return Err(format!(
                    "mesh {i}: cannot be prepared (a vertex's weights sum to 0, or no memory)"
                ));
            }
            prepared.meshes.push((handle, vertices));
        }
        Ok(prepared)
    }
}

impl Prepared<'_> {
    /// Skins every mesh into packed positions and normals, meshes one after another.
    pub fn skin(&self, bones: &[Mat3x4], positions: &mut [f32], normals: &mut [f32]) {
        let mut at = 0;
        for &(handle, vertices) in &self.meshes {
            let end = at + vertices * 3;
            let (Some(p), Some(n)) = (positions.get_mut(at..end), normals.get_mut(at..end)) else {
                return;
            };
            // SAFETY: `handle` came from dp_skin_prepare for a mesh of `vertices` vertices of
            // this model, `bones` holds its 12-float matrices, and `p`, `n` hold 3 floats per
            // vertex.
            unsafe {
                (self.baseline.skin)(
                    handle,
                    bones.as_ptr().cast(),
                    p.as_mut_ptr(),
                    n.as_mut_ptr(),
                )
            };
            at = end;
        }
    }

    /// The lower bound's `pose * inverse bind` (dp_skin.c's dp_bound_relative) for every mesh;
    /// false where the CPU lacks AVX2 or FMA.
    pub fn bound_relative(&self, bones: &[Mat3x4]) -> bool {
        self.meshes.iter().all(|&(handle, _)| {
            // SAFETY: `handle` came from dp_skin_prepare for this model, and `bones` holds its
            // 12-float matrices; the function writes only the palette it owns.
            unsafe { (self.baseline.bound_relative)(handle, bones.as_ptr().cast()) != 0 }
        })
    }

    /// The lower bound's blends (dp_skin.c's dp_bound_blends) for every mesh, from the
    /// matrices [`Prepared::bound_relative`] left, `grouped` by bones or not; false where the
    /// CPU lacks AVX2 or FMA.
    pub fn bound_blends(&self, grouped: bool) -> bool {
        self.meshes.iter().all(|&(handle, _)| {
            // SAFETY: `handle` came from dp_skin_prepare; the function reads and writes only
            // the palette it owns.
            unsafe { (self.baseline.bound_blends)(handle, i32::from(grouped)) != 0 }
        })
    }
}

impl Drop for Prepared<'_> {
    fn drop(&mut self) {
        for &(handle, _) in &self.meshes {
            // SAFETY: each handle came from dp_skin_prepare and is freed once.
            unsafe { (self.baseline.free)(handle) };
        }
    }
}

type SsePrepare = unsafe extern "C" fn(
    u32,
    *const u32,
    *const Influence,
    u32,
    *const f32,
    *const f32,
    i32,
) -> *mut c_void;
type SseSetCount = unsafe extern "C" fn(*mut c_void) -> u32;

/// `benches/baseline/dp_sse.c`, DarkPlaces' SSE skinning, compiled with one set of flags.
pub struct Sse {
    flags: String,
    prepare: SsePrepare,
    skin: Skin,
    set_count: SseSetCount,
    free: Free,
}

/// One whole model prepared by [`Sse`]: all meshes in one vertex array, as DarkPlaces keeps
/// them.
pub struct SsePrepared<'a> {
    sse: &'a Sse,
    handle: *mut c_void,
    vertices: usize,
}

impl Sse {
    /// Compiles dp_sse.c with `$CC` (default `cc`), DarkPlaces' release flags and `extra`, and
    /// loads it; the error says what failed.
    pub fn build(extra: &[&str]) -> Result<Sse, String> {
        let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
        let flags: Vec<&str> = DP_RELEASE_FLAGS.iter().chain(extra).copied().collect();
        let dir = std::env::temp_dir().join(format!(
            "ossa-baseline-{}-sse{}",
            std::process::id(),
            extra.len()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let handle = compile(&compiler, &dir, "dp_sse", SSE_SOURCE, &flags);
        // The loaded object stays mapped after its file is gone.
        let _ = std::fs::remove_dir_all(&dir);
        let handle = handle?;
        let (prepare, skin, set_count, free) = (
            symbol(handle, "dps_prepare")?,
            symbol(handle, "dps_skin")?,
            symbol(handle, "dps_set_count")?,
            symbol(handle, "dps_free")?,
        );
        // SAFETY: the four symbols are the functions dp_sse.c defines with exactly these
        // signatures (dps_influence is Influence's repr(C) layout; matrices are 12 floats).
        unsafe {
            Ok(Sse {
                flags: format!("{compiler} {}", flags.join(" ")),
                prepare: std::mem::transmute::<*mut c_void, SsePrepare>(prepare),
                skin: std::mem::transmute::<*mut c_void, Skin>(skin),
                set_count: std::mem::transmute::<*mut c_void, SseSetCount>(set_count),
                free: std::mem::transmute::<*mut c_void, Free>(free),
            })
        }
    }

    /// The compiler and flags it was built with.
    pub fn flags(&self) -> &str {
        &self.flags
    }

    /// Prepares every mesh of a bound model as one vertex array: DarkPlaces' 4 strongest
    /// influences in byte weights, or with `exact` every influence and its float weight.
    pub fn prepare(&self, model: &Model, exact: bool) -> Result<SsePrepared<'_>, String> {
        let mut starts = vec![0u32];
        let mut influences: Vec<Influence> = Vec::new();
        for mesh in model.meshes() {
            for v in 0..mesh.vertex_count() {
                influences.extend_from_slice(mesh.influences(v));
                starts.push(influences.len() as u32);
            }
        }
        let bind = model.skeleton().bind_pose();
        let inverse = model.skeleton().inverse_bind();
        // SAFETY: `starts` has vertices + 1 entries indexing `influences`, whose bones are
        // below the bone count; bind and inverse hold 12 floats per bone. The function only
        // reads them.
        let handle = unsafe {
            (self.prepare)(
                (starts.len() - 1) as u32,
                starts.as_ptr(),
                influences.as_ptr(),
                bind.len() as u32,
                bind.as_ptr().cast(),
                inverse.as_ptr().cast(),
                i32::from(exact),
            )
        };
        if handle.is_null() {
            return Err(
                "cannot be prepared (not x86-64, a vertex's weights sum to 0, or no memory)"
                    .to_owned(),
            );
        }
        Ok(SsePrepared {
            sse: self,
            handle,
            vertices: starts.len() - 1,
        })
    }
}

impl SsePrepared<'_> {
    /// Skins the whole model into packed positions and normals (3 floats per vertex each);
    /// does nothing where a buffer is short.
    pub fn skin(&self, bones: &[Mat3x4], positions: &mut [f32], normals: &mut [f32]) {
        if positions.len() < self.vertices * 3 || normals.len() < self.vertices * 3 {
            return;
        }
        // SAFETY: `handle` came from dps_prepare for this model, `bones` holds its 12-float
        // matrices, and both buffers hold 3 floats per vertex of the model.
        unsafe {
            (self.sse.skin)(
                self.handle,
                bones.as_ptr().cast(),
                positions.as_mut_ptr(),
                normals.as_mut_ptr(),
            )
        };
    }

    /// The unique sets whose matrices are blended per call.
    pub fn sets(&self) -> u32 {
        // SAFETY: `handle` came from dps_prepare.
        unsafe { (self.sse.set_count)(self.handle) }
    }
}

impl Drop for SsePrepared<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from dps_prepare and is freed once.
        unsafe { (self.sse.free)(self.handle) };
    }
}
