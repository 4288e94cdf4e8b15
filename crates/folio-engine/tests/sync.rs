//! Issue 31: folders that stay indexed. After every pass the library's
//! documents from a folder are exactly the folder's supported files, read
//! here independently of the engine's walker; moves embed nothing (the
//! embedder counts what it embeds); unchanged files are not read; a
//! missing folder removes nothing; a dry run changes nothing; a read-only
//! engine refuses; a watch picks up a saved file within seconds.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use folio_core::{EmbeddingSpace, ErrorCode, LibraryName, Limits, Pooling};
use folio_embed::{EmbedError, Embedder};
use folio_engine::sync::{SyncRequest, WatchOptions};
use folio_engine::{
    ChunkingConfig, EmbedderConfig, Engine, EngineConfig, Fusion, Mode, OcrConfig, SearchRequest,
    SilentProgress,
};
use folio_store::Bm25;
use folio_testkit::postgres::TestDatabase;

/// Hash vectors, counting the passages it embeds.
struct CountingEmbedder {
    space: EmbeddingSpace,
    passages: Arc<AtomicUsize>,
}

impl Embedder for CountingEmbedder {
    fn space(&self) -> &EmbeddingSpace {
        &self.space
    }
    fn window(&self) -> usize {
        256
    }
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.passages.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().map(|t| vector(t)).collect())
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(vector(text))
    }
    fn backend(&self) -> &'static str {
        "test-count"
    }
}

fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 16];
    for word in text.split_whitespace() {
        let h = word
            .to_lowercase()
            .bytes()
            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
        v[(h % 16) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn open(dir: &Path, store_url: Option<&str>, writable: bool) -> (Engine, Arc<AtomicUsize>) {
    let passages = Arc::new(AtomicUsize::new(0));
    let config = EngineConfig {
        data_dir: dir.to_path_buf(),
        store_url: store_url.map(str::to_string),
        embedder: EmbedderConfig::Candle {
            model_dir: dir.join("no-model"),
            model: Default::default(),
        },
        limits: Limits::default(),
        chunking: ChunkingConfig::default(),
        roots: Vec::new(),
        guard_paths: false,
        allow_private_urls: false,
        fusion: Fusion::default(),
        bm25: Bm25::default(),
        writable: writable.then_some(Duration::from_secs(30)),
        ocr: OcrConfig {
            enabled: false,
            ..OcrConfig::default()
        },
        extraction: folio_engine::sandbox::Extraction::InProcess,
        rerank: None,
        entities: true,
        model_fetch: None,
    };
    let engine = Engine::open(config)
        .unwrap()
        .with_embedder(Arc::new(CountingEmbedder {
            space: EmbeddingSpace {
                model: "test/count-16".into(),
                dim: 16,
                pooling: Pooling::Mean,
                normalized: true,
                query_prefix: String::new(),
                passage_prefix: String::new(),
                precision: Default::default(),
            },
            passages: passages.clone(),
        }));
    (engine, passages)
}

fn library() -> LibraryName {
    LibraryName::new("notes").unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The folder's files a sync must index, by rules read here: Markdown and
/// text files, not hidden, not under a hidden folder, not named in the
/// folder's .folioignore (plain names), not editor lock files.
fn expected(folder: &Path) -> BTreeSet<String> {
    let ignored: BTreeSet<String> = std::fs::read_to_string(folder.join(".folioignore"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let mut found = BTreeSet::new();
    let mut stack = vec![folder.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') || name.starts_with("~$") || ignored.contains(&name) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(".md") || name.ends_with(".txt") {
                found.insert(path.canonicalize().unwrap().display().to_string());
            }
        }
    }
    found
}

fn sources(engine: &Engine) -> BTreeSet<String> {
    match engine.documents(&library(), 0, 10_000) {
        Ok((docs, _)) => docs.into_iter().map(|d| d.source).collect(),
        Err(_) => BTreeSet::new(),
    }
}

fn found(engine: &Engine, query: &str) -> Vec<String> {
    let mut request = SearchRequest::new(library(), query);
    request.mode = Mode::Lexical;
    match engine.search(&request) {
        Ok(response) => response.hits.into_iter().filter_map(|h| h.source).collect(),
        Err(e) if e.code == ErrorCode::LibraryNotFound => Vec::new(),
        Err(e) => panic!("{e:?}"),
    }
}

/// A watch of `folder` with short waits, for tests.
fn quick_watch(folder: &Path) -> (SyncRequest, WatchOptions) {
    let mut request = SyncRequest::new(library(), folder);
    request.settle = Duration::from_millis(100);
    let options = WatchOptions {
        debounce: Duration::from_millis(100),
        rescan: Duration::from_secs(3600),
        tick: Duration::from_millis(20),
        standby: Duration::from_millis(200),
    };
    (request, options)
}

fn sync_follows_the_folder(dir: &Path, store_url: Option<&str>) {
    let folder = dir.join("notes");
    write(
        &folder.join("a.md"),
        "# A\n\nApples grow on trees in the orchard.",
    );
    write(
        &folder.join("b.md"),
        "# B\n\nBananas ripen in the warm sun.",
    );
    write(
        &folder.join("sub/c.md"),
        "# C\n\nCherries are small and red.",
    );
    write(&folder.join("notes.txt"), "Dates come from palms.");
    write(&folder.join(".hidden.md"), "# Hidden\n\nNot indexed.");
    write(&folder.join("~$lock.md"), "lock");
    write(
        &folder.join("draft.md"),
        "# Draft\n\nIgnored by the ignore file.",
    );
    write(&folder.join(".folioignore"), "draft.md\n");
    let folder = folder.canonicalize().unwrap();
    let (engine, passages) = open(&dir.join("data"), store_url, true);
    let request = SyncRequest::new(library(), &folder);

    let first = engine.sync(&request, &SilentProgress).unwrap();
    assert_eq!(first.added.len(), 4, "{first:?}");
    assert_eq!(sources(&engine), expected(&folder));
    let embedded = passages.load(Ordering::SeqCst);
    assert!(embedded >= 4);

    // Nothing changed: nothing read, nothing embedded.
    let again = engine.sync(&request, &SilentProgress).unwrap();
    assert_eq!((again.unchanged, again.read_bytes), (4, 0), "{again:?}");
    assert!(!again.changed());
    assert_eq!(passages.load(Ordering::SeqCst), embedded);

    // A delete, a move into a new folder, an edit, a touch, a new file.
    std::fs::remove_file(folder.join("b.md")).unwrap();
    std::fs::create_dir_all(folder.join("moved")).unwrap();
    std::fs::rename(folder.join("sub/c.md"), folder.join("moved/c2.md")).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    write(&folder.join("a.md"), "# A\n\nApricots replaced the apples.");
    let same = std::fs::read(folder.join("notes.txt")).unwrap();
    std::fs::write(folder.join("notes.txt"), same).unwrap();
    write(&folder.join("d.md"), "# D\n\nElderberries make a cordial.");
    let dry = {
        let mut r = request.clone();
        r.dry_run = true;
        engine.sync(&r, &SilentProgress).unwrap()
    };
    assert_eq!(
        (dry.removed.len(), dry.moved.len(), dry.added.len()),
        (1, 1, 1)
    );
    assert!(sources(&engine).contains(&folder.join("b.md").display().to_string()));
    let before = passages.load(Ordering::SeqCst);
    let pass = engine.sync(&request, &SilentProgress).unwrap();
    assert_eq!(
        pass.removed,
        vec![folder.join("b.md").display().to_string()]
    );
    assert_eq!(pass.moved.len(), 1, "{pass:?}");
    assert_eq!(
        pass.moved[0].to,
        folder.join("moved/c2.md").display().to_string()
    );
    assert_eq!(
        pass.replaced,
        vec![folder.join("a.md").display().to_string()]
    );
    assert_eq!(pass.added, vec![folder.join("d.md").display().to_string()]);
    assert!(pass.touched <= 1 && pass.failed.is_empty(), "{pass:?}");
    assert_eq!(sources(&engine), expected(&folder));
    // Only the edited and the new file were embedded (one chunk each).
    assert_eq!(passages.load(Ordering::SeqCst) - before, 2);
    assert_eq!(
        found(&engine, "cherries"),
        vec![folder.join("moved/c2.md").display().to_string()]
    );
    assert!(found(&engine, "bananas").is_empty());
    assert_eq!(
        found(&engine, "apricots"),
        vec![folder.join("a.md").display().to_string()]
    );
    // Moved mentions and vectors still answer (dense search finds it too).
    let mut dense = SearchRequest::new(library(), "cherries are small and red");
    dense.mode = Mode::Dense;
    dense.top_k = 1;
    assert_eq!(
        engine.search(&dense).unwrap().hits[0].source.as_deref(),
        Some(folder.join("moved/c2.md").display().to_string().as_str())
    );

    // A folder renamed away (an unmounted disk): an error, nothing removed.
    let away = dir.join("away");
    std::fs::rename(&folder, &away).unwrap();
    let kept = sources(&engine);
    let missing = engine.sync(&request, &SilentProgress).unwrap_err();
    assert_eq!(missing.code, ErrorCode::NotFound);
    assert_eq!(sources(&engine), kept);
    std::fs::rename(&away, &folder).unwrap();
    drop(engine);

    // A read-only engine refuses a pass that would write.
    let (reader, _) = open(&dir.join("data"), store_url, false);
    assert!(reader.sync(&request, &SilentProgress).is_err());
}

#[test]
fn sync_follows_the_folder_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    sync_follows_the_folder(dir.path(), None);
}

#[test]
fn sync_follows_the_folder_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::new("sync");
    sync_follows_the_folder(dir.path(), Some(&database.url));
}

/// A watch applies a saved file, a delete and a move while it runs, each
/// within seconds, and stops when asked; a file that fails (empty) is
/// reported once and left alone until it changes.
#[test]
fn a_watch_follows_saves_deletes_and_moves() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("watched");
    write(&folder.join("first.md"), "# First\n\nFigs are sweet.");
    write(&folder.join("empty.md"), "   \n");
    let folder = folder.canonicalize().unwrap();
    let (engine, _) = open(&dir.path().join("data"), None, true);
    let engine = Arc::new(engine);
    let stop = Arc::new(AtomicBool::new(false));
    let (request, options) = quick_watch(&folder);
    let reports = Arc::new(std::sync::Mutex::new(Vec::new()));
    let watcher = {
        let (engine, stop, request) = (engine.clone(), stop.clone(), request.clone());
        let reports = reports.clone();
        std::thread::spawn(move || {
            engine.watch(&request, &options, &stop, &mut |pass| {
                if let Ok(report) = pass {
                    reports.lock().unwrap().push(report);
                }
            })
        })
    };
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let started = Instant::now();
        while !done() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{what} never applied"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        started.elapsed()
    };
    wait_for("the first pass", &|| !found(&engine, "figs").is_empty());
    write(
        &folder.join("second.md"),
        "# Second\n\nGuavas are tropical.",
    );
    let saved: PathBuf = folder.join("second.md");
    wait_for("a save", &|| {
        found(&engine, "guavas") == vec![saved.display().to_string()]
    });
    std::fs::remove_file(folder.join("first.md")).unwrap();
    wait_for("a delete", &|| found(&engine, "figs").is_empty());
    std::fs::create_dir_all(folder.join("deep")).unwrap();
    std::fs::rename(&saved, folder.join("deep/second.md")).unwrap();
    let moved = folder.join("deep/second.md").display().to_string();
    wait_for("a move", &|| {
        found(&engine, "guavas") == vec![moved.clone()]
    });
    // Every file but the empty one, which failed once; later passes did
    // not read it again.
    let empty = folder.join("empty.md").display().to_string();
    let mut indexable = expected(&folder);
    indexable.remove(&empty);
    assert_eq!(sources(&engine), indexable);
    {
        let reports = reports.lock().unwrap();
        let failed: usize = reports
            .iter()
            .map(|r| r.failed.iter().filter(|f| f.source == empty).count())
            .sum();
        assert_eq!(failed, 1, "{reports:?}");
        assert!(reports.last().unwrap().still_failing.contains(&empty));
    }
    // Once it has text, it is indexed.
    write(&folder.join("empty.md"), "# Now\n\nHoneydew melons.");
    wait_for("a fixed file", &|| {
        found(&engine, "honeydew") == vec![empty.clone()]
    });
    assert_eq!(sources(&engine), expected(&folder));
    stop.store(true, Ordering::SeqCst);
    watcher.join().unwrap().unwrap();
}

/// On PostgreSQL, two processes watching one folder: exactly one applies
/// its changes (the other stands by), and when it stops the other takes
/// over.
#[test]
fn two_watchers_of_one_folder_on_postgres_take_turns() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::new("watchers");
    let folder = dir.path().join("shared");
    write(&folder.join("one.md"), "# One\n\nKiwis are fuzzy.");
    let folder = folder.canonicalize().unwrap();
    let (request, options) = quick_watch(&folder);
    let (first, _) = open(&dir.path().join("a"), Some(&database.url), true);
    let (second, _) = open(&dir.path().join("b"), Some(&database.url), true);
    let (first, second) = (Arc::new(first), Arc::new(second));
    let applied = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
    let stops = [
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    ];
    let spawn = |engine: Arc<Engine>, which: usize| {
        let (request, options) = (request.clone(), options.clone());
        let (applied, stop) = (applied[which].clone(), stops[which].clone());
        std::thread::spawn(move || {
            engine.watch(&request, &options, &stop, &mut |pass| {
                if pass.is_ok_and(|r| r.changed()) {
                    applied.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
    };
    let a = spawn(first.clone(), 0);
    // The first holds the claim before the second asks.
    let started = Instant::now();
    while found(&first, "kiwis").is_empty() {
        assert!(started.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(50));
    }
    let b = spawn(second.clone(), 1);
    for (i, fruit) in ["lemons", "limes", "mangoes"].iter().enumerate() {
        write(
            &folder.join(format!("f{i}.md")),
            &format!("# F\n\n{fruit} here."),
        );
        let started = Instant::now();
        while found(&second, fruit).is_empty() {
            assert!(started.elapsed() < Duration::from_secs(10), "{fruit}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    assert!(applied[0].load(Ordering::SeqCst) >= 2);
    assert_eq!(applied[1].load(Ordering::SeqCst), 0, "the second stood by");
    // The first stops: the second takes over.
    stops[0].store(true, Ordering::SeqCst);
    a.join().unwrap().unwrap();
    drop(first);
    write(&folder.join("late.md"), "# Late\n\nNectarines arrive late.");
    let started = Instant::now();
    while found(&second, "nectarines").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "never taken over"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(applied[1].load(Ordering::SeqCst) >= 1);
    stops[1].store(true, Ordering::SeqCst);
    b.join().unwrap().unwrap();
}

/// The inode numbers this process's inotify instances watch, read from
/// `/proc/self/fdinfo` (a line `inotify wd:… ino:<hex> …` per watch).
fn inotify_watched_inodes() -> BTreeSet<u64> {
    let mut inodes = BTreeSet::new();
    for fd in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let inotify = std::fs::read_link(fd.path())
            .is_ok_and(|target| target.to_string_lossy().contains("inotify"));
        if !inotify {
            continue;
        }
        let info = std::fs::read_to_string(Path::new("/proc/self/fdinfo").join(fd.file_name()))
            .unwrap_or_default();
        for line in info.lines().filter(|l| l.starts_with("inotify wd:")) {
            if let Some(ino) = line
                .split_whitespace()
                .find_map(|field| field.strip_prefix("ino:"))
                .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            {
                inodes.insert(ino);
            }
        }
    }
    inodes
}

// Issue 46 §4: the watcher followed symbolic links, so a link to `/` in a
// watched folder watched the whole file system. The folders behind a link
// are not watched (passes never follow links either); the folder itself is.
#[test]
fn a_watch_does_not_follow_symbolic_links() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("watched");
    write(&folder.join("first.md"), "# First\n\nFigs are sweet.");
    let elsewhere = dir.path().join("elsewhere");
    for i in 0..20 {
        write(
            &elsewhere.join(format!("d{i}/note.md")),
            "# Far\n\nKumquats.",
        );
    }
    std::os::unix::fs::symlink(&elsewhere, folder.join("link")).unwrap();
    let folder = folder.canonicalize().unwrap();
    let (engine, _) = open(&dir.path().join("data"), None, true);
    let engine = Arc::new(engine);
    let stop = Arc::new(AtomicBool::new(false));
    let (request, options) = quick_watch(&folder);
    let watcher = {
        let (engine, stop) = (engine.clone(), stop.clone());
        std::thread::spawn(move || engine.watch(&request, &options, &stop, &mut |_| {}))
    };
    let started = Instant::now();
    while found(&engine, "figs").is_empty() {
        assert!(started.elapsed() < Duration::from_secs(20), "no first pass");
        std::thread::sleep(Duration::from_millis(50));
    }
    let watched = inotify_watched_inodes();
    let own = std::fs::metadata(&folder).unwrap().ino();
    assert!(watched.contains(&own), "the folder itself is watched");
    let behind_link: Vec<u64> = std::iter::once(elsewhere.clone())
        .chain((0..20).map(|i| elsewhere.join(format!("d{i}"))))
        .map(|p| std::fs::metadata(p).unwrap().ino())
        .collect();
    assert!(
        behind_link.iter().all(|ino| !watched.contains(ino)),
        "folders behind a link are not watched"
    );
    assert!(found(&engine, "kumquats").is_empty(), "nor indexed");
    stop.store(true, Ordering::Relaxed);
    watcher.join().unwrap().unwrap();
}
