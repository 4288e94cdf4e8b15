//! ONNX graphs whose weights ONNX Runtime maps rather than copies.
//!
//! A graph with its weights inside (the hub's `onnx/model.onnx`, the export
//! of `scripts/export_onnx.py`) is parsed into the process's own memory:
//! the default model's fp32 graph added about 120 MB of anonymous memory to
//! every folio process that embedded, more than the rest of a small server.
//! The same weights in a file beside the graph (ONNX's external data) are
//! memory-mapped by ONNX Runtime, read-only and shared with the page cache:
//! the word-embedding table, half of a small model, then costs only the
//! rows texts use (docs/benchmarks-history.md, "Memory of the encoder").
//!
//! So a graph is loaded through a copy in folio's home (`graphs/`, beside
//! the models) with each weight moved to `graph.onnx.data`: the same
//! tensors, byte for byte, so the same vectors. The copy is made once,
//! keyed by the graph's path, and made again when the graph's length or
//! modification time change. The model's own folder (the hub's cache is
//! shared with Python) is never written. Anything that fails leaves the
//! graph loaded as it is.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// A tensor's bytes move to the data file from this length: the many small
/// constants of a graph (shapes, axes) stay in it.
const MOVED_FROM: usize = 1024;
/// A graph with fewer inline weight bytes than this is loaded as it is.
const WORTH_MAPPING: usize = 1 << 20;
/// Each tensor's bytes start on a line of 64 bytes of the data file (a
/// page each cost the int8 graph 11 MB of padding).
const ALIGN: u64 = 64;

/// The graph ONNX Runtime should load for `graph`: the cached copy with
/// external weights, made now if missing or stale, or `graph` itself when
/// its weights are outside it already, when it is small, or when no copy
/// can be made (the reason is logged).
pub fn mapped(graph: &Path) -> PathBuf {
    // `graphs` in folio's home, beside its models.
    let Some(cache) = folio_core::folio_home().map(|home| home.join("graphs")) else {
        return graph.to_path_buf();
    };
    match mapped_in(graph, &cache) {
        Ok(Some(copy)) => copy,
        Ok(None) => graph.to_path_buf(),
        Err(e) => {
            tracing::info!(
                graph = %graph.display(),
                cache = %cache.display(),
                "cannot map the graph's weights; loading it whole: {e}"
            );
            graph.to_path_buf()
        }
    }
}

/// What a copy was made from: the graph's length and modification time,
/// then its path.
fn stamp(graph: &Path) -> std::io::Result<String> {
    let meta = fs::metadata(graph)?;
    let modified = meta
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    Ok(format!("{} {modified}\n{}\n", meta.len(), graph.display()))
}

/// Removes the copies of graphs that are gone (a model removed, or a newer
/// revision of it fetched to another path), and copies left half made over
/// an hour ago.
fn sweep(cache: &Path) {
    let Ok(entries) = fs::read_dir(cache) else {
        return;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        if dir_name(&dir).ends_with(".part") {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|e| e.as_secs() > 3600));
            if old {
                let _ = fs::remove_dir_all(&dir);
            }
            continue;
        }
        let Ok(source) = fs::read_to_string(dir.join("source")) else {
            continue;
        };
        if source
            .lines()
            .nth(1)
            .is_some_and(|p| !Path::new(p).exists())
        {
            let _ = fs::remove_dir_all(&dir);
        }
    }
}

/// `mapped` with the cache folder given: `Ok(None)` when the graph is to
/// be loaded as it is.
pub fn mapped_in(graph: &Path, cache: &Path) -> std::io::Result<Option<PathBuf>> {
    let source = fs::canonicalize(graph)?;
    let key = hex::encode(&Sha256::digest(source.as_os_str().as_encoded_bytes())[..12]);
    let dir = cache.join(key);
    let copy = dir.join("graph.onnx");
    let stamp = stamp(&source)?;
    let fresh = || {
        fs::read_to_string(dir.join("source")).is_ok_and(|s| s == stamp)
            && copy.exists()
            && dir.join(DATA_FILE).exists()
    };
    if fresh() {
        return Ok(Some(copy));
    }
    // A graph smaller than what is worth mapping holds less of it inline.
    if fs::metadata(&source)?.len() < WORTH_MAPPING as u64 {
        return Ok(None);
    }
    let bytes = fs::read(&source)?;
    fs::create_dir_all(cache)?;
    // A folder of this call's own: other threads and processes may be
    // making the same copy.
    static MADE: AtomicU64 = AtomicU64::new(0);
    let part = cache.join(format!(
        ".{}.{}.{}.part",
        dir_name(&dir),
        std::process::id(),
        MADE.fetch_add(1, Ordering::Relaxed)
    ));
    fs::create_dir_all(&part)?;
    let made = (|| {
        let mut data = DataFile::create(&part.join("graph.onnx.data"))?;
        let model = rewrite_model(&bytes, &mut data).map_err(invalid)?;
        if data.len < WORTH_MAPPING as u64 || data.external_seen {
            return Ok(false);
        }
        data.finish()?;
        write_synced(&part.join("graph.onnx"), &model)?;
        write_synced(&part.join("source"), stamp.as_bytes())?;
        Ok(true)
    })();
    match made {
        Ok(true) => {}
        Ok(false) => {
            let _ = fs::remove_dir_all(&part);
            return Ok(None);
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&part);
            return Err(e);
        }
    }
    // Another thread or process may have put a fresh copy in place
    // meanwhile: then this one is dropped. A stale one is replaced.
    if fs::rename(&part, &dir).is_err() {
        if !fresh() {
            let _ = fs::remove_dir_all(&dir);
            let _ = fs::rename(&part, &dir);
        }
        let _ = fs::remove_dir_all(&part);
    }
    sweep(cache);
    Ok(fresh().then_some(copy))
}

fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn invalid(reason: &'static str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("not an ONNX graph folio can rewrite: {reason}"),
    )
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// The data file the moved tensors go to, each at an `ALIGN` boundary.
struct DataFile {
    out: BufWriter<File>,
    len: u64,
    /// A tensor of the graph keeps its bytes in a file of its own already:
    /// the graph is loaded from where it is, beside that file.
    external_seen: bool,
}

impl DataFile {
    fn create(path: &Path) -> std::io::Result<Self> {
        Ok(DataFile {
            out: BufWriter::with_capacity(1 << 20, File::create(path)?),
            len: 0,
            external_seen: false,
        })
    }

    /// Appends `bytes` at the next `ALIGN` boundary; returns their offset.
    fn append(&mut self, bytes: &[u8]) -> Result<u64, &'static str> {
        let offset = self.len.div_ceil(ALIGN) * ALIGN;
        let padding = vec![0u8; (offset - self.len) as usize];
        self.out
            .write_all(&padding)
            .and_then(|()| self.out.write_all(bytes))
            .map_err(|_| "writing the data file")?;
        self.len = offset + bytes.len() as u64;
        Ok(offset)
    }

    fn finish(self) -> std::io::Result<()> {
        self.out
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_all()
    }
}

// Protocol buffers' wire format, as much of it as ONNX's messages use.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

// Field numbers (onnx.proto): ModelProto.graph, GraphProto.initializer,
// TensorProto.raw_data / external_data / data_location, and the key and
// value of a StringStringEntryProto.
const MODEL_GRAPH: u64 = 7;
const GRAPH_INITIALIZER: u64 = 5;
const TENSOR_RAW_DATA: u64 = 9;
const TENSOR_EXTERNAL_DATA: u64 = 13;
const TENSOR_DATA_LOCATION: u64 = 14;
const ENTRY_KEY: u64 = 1;
const ENTRY_VALUE: u64 = 2;
/// TensorProto.DataLocation.EXTERNAL.
const EXTERNAL: u64 = 1;
/// The data file's name, relative to the graph, as ONNX Runtime requires.
const DATA_FILE: &str = "graph.onnx.data";

/// One field of a message: its number, wire type, the bytes of the whole
/// field and, for a length-delimited one, of its payload.
struct Field<'a> {
    number: u64,
    wire: u8,
    whole: &'a [u8],
    payload: &'a [u8],
}

fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, &'static str> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at).ok_or("a truncated number")?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a number over ten bytes")
}

fn fields(message: &[u8]) -> Result<Vec<Field<'_>>, &'static str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < message.len() {
        let start = at;
        let tag = varint(message, &mut at)?;
        let (number, wire) = (tag >> 3, (tag & 7) as u8);
        let mut payload = &message[at..at];
        match wire {
            VARINT => {
                varint(message, &mut at)?;
            }
            FIXED64 => at += 8,
            FIXED32 => at += 4,
            LEN => {
                let len = usize::try_from(varint(message, &mut at)?).map_err(|_| "a length")?;
                let end = at.checked_add(len).ok_or("a length")?;
                payload = message.get(at..end).ok_or("a truncated field")?;
                at = end;
            }
            _ => return Err("a group or an unknown wire type"),
        }
        let whole = message.get(start..at).ok_or("a truncated field")?;
        out.push(Field {
            number,
            wire,
            whole,
            payload,
        });
    }
    Ok(out)
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_len(out: &mut Vec<u8>, number: u64, payload: &[u8]) {
    put_varint(out, (number << 3) | u64::from(LEN));
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// The model with its graph's initializers' bytes moved to `data`. Fields
/// are kept in their order; a rewritten message is re-framed.
fn rewrite_model(model: &[u8], data: &mut DataFile) -> Result<Vec<u8>, &'static str> {
    let mut graphs = 0;
    let out = rewrite_fields(model, MODEL_GRAPH, |graph| {
        graphs += 1;
        rewrite_fields(graph, GRAPH_INITIALIZER, |tensor| {
            rewrite_tensor(tensor, data)
        })
    })?;
    if graphs != 1 {
        return Err("a model without its one graph");
    }
    Ok(out)
}

/// `message` with each length-delimited field `number` replaced by what
/// `rewrite` makes of its payload, and every other field as it was.
fn rewrite_fields(
    message: &[u8],
    number: u64,
    mut rewrite: impl FnMut(&[u8]) -> Result<Vec<u8>, &'static str>,
) -> Result<Vec<u8>, &'static str> {
    let mut out = Vec::with_capacity(message.len().min(1 << 20));
    for field in fields(message)? {
        if field.number == number && field.wire == LEN {
            put_len(&mut out, number, &rewrite(field.payload)?);
        } else {
            out.extend_from_slice(field.whole);
        }
    }
    Ok(out)
}

/// A tensor whose `raw_data` is large enough moves it to `data` and says
/// where (location, offset, length; data_location EXTERNAL); any other
/// tensor is kept as it is.
fn rewrite_tensor(tensor: &[u8], data: &mut DataFile) -> Result<Vec<u8>, &'static str> {
    let fields = fields(tensor)?;
    let raw = fields
        .iter()
        .find(|f| f.number == TENSOR_RAW_DATA && f.wire == LEN);
    let external = fields
        .iter()
        .any(|f| f.number == TENSOR_EXTERNAL_DATA || f.number == TENSOR_DATA_LOCATION);
    data.external_seen |= external;
    let Some(raw) = raw.filter(|r| r.payload.len() >= MOVED_FROM && !external) else {
        return Ok(tensor.to_vec());
    };
    let offset = data.append(raw.payload)?;
    let mut out = Vec::with_capacity(tensor.len() - raw.whole.len() + 96);
    for field in &fields {
        if !(field.number == TENSOR_RAW_DATA && field.wire == LEN) {
            out.extend_from_slice(field.whole);
        }
    }
    for (key, value) in [
        ("location", DATA_FILE.to_string()),
        ("offset", offset.to_string()),
        ("length", raw.payload.len().to_string()),
    ] {
        let mut entry = Vec::new();
        put_len(&mut entry, ENTRY_KEY, key.as_bytes());
        put_len(&mut entry, ENTRY_VALUE, value.as_bytes());
        put_len(&mut out, TENSOR_EXTERNAL_DATA, &entry);
    }
    put_varint(&mut out, (TENSOR_DATA_LOCATION << 3) | u64::from(VARINT));
    put_varint(&mut out, EXTERNAL);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model of one graph of two initializers, one large, one small, as
    /// an exporter writes them, with other fields around.
    fn model(large: &[u8]) -> Vec<u8> {
        let tensor = |name: &str, raw: &[u8]| {
            let mut t = Vec::new();
            put_varint(&mut t, 1 << 3); // dims
            put_varint(&mut t, raw.len() as u64 / 4);
            put_varint(&mut t, 2 << 3); // data_type FLOAT
            put_varint(&mut t, 1);
            put_len(&mut t, 8, name.as_bytes());
            put_len(&mut t, TENSOR_RAW_DATA, raw);
            t
        };
        let mut graph = Vec::new();
        put_len(&mut graph, 2, b"main");
        put_len(&mut graph, GRAPH_INITIALIZER, &tensor("big", large));
        put_len(
            &mut graph,
            GRAPH_INITIALIZER,
            &tensor("small", &[1, 2, 3, 4]),
        );
        let mut model = Vec::new();
        put_varint(&mut model, 1 << 3); // ir_version
        put_varint(&mut model, 8);
        put_len(&mut model, 2, b"exporter");
        put_len(&mut model, MODEL_GRAPH, &graph);
        model
    }

    fn entries(tensor: &[u8]) -> Vec<(String, String)> {
        fields(tensor)
            .unwrap()
            .iter()
            .filter(|f| f.number == TENSOR_EXTERNAL_DATA)
            .map(|f| {
                let kv = fields(f.payload).unwrap();
                (
                    String::from_utf8(kv[0].payload.to_vec()).unwrap(),
                    String::from_utf8(kv[1].payload.to_vec()).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn large_weights_move_to_the_data_file_and_the_rest_stays() {
        let large: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let mut data = DataFile::create(&path).unwrap();
        data.append(&[9; 10]).unwrap();
        let rewritten = rewrite_model(&model(&large), &mut data).unwrap();
        data.finish().unwrap();
        let top = fields(&rewritten).unwrap();
        assert_eq!(top.len(), 3);
        assert_eq!(top[1].payload, b"exporter");
        let graph = fields(top[2].payload).unwrap();
        assert_eq!(graph[0].payload, b"main");
        let big = fields(graph[1].payload).unwrap();
        assert!(big.iter().all(|f| f.number != TENSOR_RAW_DATA));
        assert!(big.iter().any(|f| f.number == 8 && f.payload == b"big"));
        let location = big
            .iter()
            .find(|f| f.number == TENSOR_DATA_LOCATION)
            .unwrap();
        assert_eq!(location.whole, [(TENSOR_DATA_LOCATION << 3) as u8, 1]);
        assert_eq!(
            entries(graph[1].payload),
            vec![
                ("location".to_string(), DATA_FILE.to_string()),
                ("offset".to_string(), "64".to_string()),
                ("length".to_string(), "5000".to_string()),
            ]
        );
        let written = fs::read(&path).unwrap();
        assert_eq!(&written[64..], &large[..]);
        // The small tensor is kept whole, field for field.
        let small = fields(graph[2].payload).unwrap();
        assert!(
            small
                .iter()
                .any(|f| f.number == TENSOR_RAW_DATA && f.payload == [1, 2, 3, 4])
        );
        assert!(entries(graph[2].payload).is_empty());
    }

    #[test]
    fn copies_made_at_once_leave_one_whole_copy() {
        let dir = tempfile::tempdir().unwrap();
        let graph = dir.path().join("model.onnx");
        let cache = dir.path().join("cache");
        let large: Vec<u8> = (0..(2u32 << 20)).map(|i| (i % 253) as u8).collect();
        fs::write(&graph, model(&large)).unwrap();
        let copies: Vec<_> = std::thread::scope(|s| {
            let made: Vec<_> = (0..6)
                .map(|_| s.spawn(|| mapped_in(&graph, &cache).unwrap()))
                .collect();
            made.into_iter().map(|m| m.join().unwrap()).collect()
        });
        let copy = copies[0].clone().unwrap();
        assert!(copies.iter().all(|c| c.as_ref() == Some(&copy)));
        assert_eq!(fs::read(copy.with_file_name(DATA_FILE)).unwrap(), large);
        assert_eq!(fs::read_dir(&cache).unwrap().count(), 1);
    }

    #[test]
    fn broken_graphs_are_refused_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = DataFile::create(&dir.path().join("data")).unwrap();
        let whole = model(&[0; 2000]);
        for cut in [1, 5, whole.len() - 3] {
            assert!(rewrite_model(&whole[..cut], &mut data).is_err(), "{cut}");
        }
        // A model without a graph.
        let mut no_graph = Vec::new();
        put_len(&mut no_graph, 2, b"exporter");
        assert!(rewrite_model(&no_graph, &mut data).is_err());
        // A length past the end.
        assert!(fields(&[0x12, 0xff, 0x01, 0]).is_err());
    }

    #[test]
    fn a_copy_is_made_once_and_again_when_the_graph_changes() {
        let dir = tempfile::tempdir().unwrap();
        let graph = dir.path().join("model.onnx");
        let cache = dir.path().join("cache");
        let large = vec![3u8; 2 << 20];
        fs::write(&graph, model(&large)).unwrap();
        let copy = mapped_in(&graph, &cache).unwrap().unwrap();
        assert_eq!(copy.file_name().unwrap(), "graph.onnx");
        let data = copy.with_file_name(DATA_FILE);
        assert_eq!(fs::read(&data).unwrap(), large);
        let made = fs::metadata(&copy).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(mapped_in(&graph, &cache).unwrap().unwrap(), copy);
        assert_eq!(fs::metadata(&copy).unwrap().modified().unwrap(), made);
        // A new graph at the same path (another length) is copied anew.
        let larger = vec![5u8; 3 << 20];
        fs::write(&graph, model(&larger)).unwrap();
        assert_eq!(mapped_in(&graph, &cache).unwrap().unwrap(), copy);
        assert_eq!(fs::read(&data).unwrap(), larger);
        // A small graph is loaded as it is.
        let small = dir.path().join("small.onnx");
        fs::write(&small, model(&[1; 4096])).unwrap();
        assert_eq!(mapped_in(&small, &cache).unwrap(), None);
        // A graph removed loses its copy when the next copy is made.
        let other = dir.path().join("other.onnx");
        fs::write(&other, model(&large)).unwrap();
        let other_copy = mapped_in(&other, &cache).unwrap().unwrap();
        fs::remove_file(&graph).unwrap();
        fs::write(&other, model(&larger)).unwrap();
        assert_eq!(mapped_in(&other, &cache).unwrap().unwrap(), other_copy);
        assert!(!copy.exists());
        // Nothing is left half made.
        let names: Vec<_> = fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
