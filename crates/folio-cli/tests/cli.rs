//! End-to-end tests of the `folio` binary with the real embedding model:
//! ingestion of every format, cited search, dedup, bad input, a kill -9
//! during ingestion, several processes on one data directory, URLs over a
//! loopback HTTP server, and BEIR evaluation.
//!
//! The model and runtime come from `scripts/setup.sh` (the README's first
//! command); these tests fail with that hint when they are missing.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use folio_testkit::model_dir;
use serde_json::{Value, json};

struct Folio {
    data: tempfile::TempDir,
    files: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Folio {
    fn new() -> Self {
        assert!(
            model_dir().join("model.safetensors").exists(),
            "the embedding model is not installed: run scripts/setup.sh first"
        );
        Folio {
            data: tempfile::tempdir().unwrap(),
            files: tempfile::tempdir().unwrap(),
            env: Vec::new(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
        command.arg("--data-dir").arg(self.data.path()).args(args);
        command.env_remove("FOLIO_DATA_DIR").env("FOLIO_CONFIG", "");
        for (k, v) in &self.env {
            command.env(k, v);
        }
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("folio runs")
    }

    /// Runs a command that must succeed and print JSON.
    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.run(&all);
        assert!(
            out.status.success(),
            "folio {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.files.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn path(&self, name: &str) -> String {
        self.files.path().join(name).display().to_string()
    }
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn research_corpus(f: &Folio) {
    f.file(
        "papers/dropout.md",
        b"---\ntitle: Dropout notes\nyear: 2014\ntags: [ml, regularisation]\n---\n# Dropout\n\nDropout regularises neural networks by randomly dropping units during training, which prevents co-adaptation of feature detectors.\n\n## Inference\n\nAt test time the weights are scaled by the keep probability.\n",
    );
    f.file("papers/notes/gd.txt", b"Gradient descent updates parameters against the gradient of the loss.\n\nThe learning rate sets the step size.");
    f.file(
        "papers/page.html",
        b"<html><head><title>Protein folding</title><script>var tracking = 1;</script></head><body><nav>Home | About</nav><h1>Protein folding</h1><p>Proteins fold into three-dimensional structures determined by their amino acid sequence.</p></body></html>",
    );
    // Two pages long enough to be two chunks.
    let page1 = format!(
        "Photosynthesis converts light energy into chemical energy. {}",
        "Plants store the energy as sugar in their leaves and stems. ".repeat(14)
    );
    let page2 = format!(
        "Chlorophyll absorbs red and blue light. {}",
        "The pigment reflects green wavelengths back to the observer. ".repeat(14)
    );
    f.file("papers/scan.pdf", &folio_testkit::pdf(&[&page1, &page2]));
    let body = [
        folio_testkit::docx_paragraph(Some("berschrift1"), "Budget overview"),
        folio_testkit::docx_paragraph(
            None,
            "The annual budget allocates funds to research and teaching.",
        ),
    ]
    .concat();
    f.file("papers/report.docx", &folio_testkit::docx(&body));
}

fn hits(response: &Value) -> &Vec<Value> {
    response["hits"].as_array().expect("hits")
}

#[test]
fn ingest_search_get_and_delete_end_to_end() {
    let f = Folio::new();
    research_corpus(&f);
    let report = f.json(&["ingest", &f.path("papers"), "--library", "research"]);
    assert_eq!(report["indexed"], 5, "{report:#}");
    assert_eq!(report["failed"], 0);

    let response = f.json(&[
        "search",
        "how does dropout regularise networks",
        "--library",
        "research",
    ]);
    let top = &hits(&response)[0];
    assert_eq!(top["title"], "Dropout notes");
    assert!(
        top["source"]
            .as_str()
            .unwrap()
            .ends_with("papers/dropout.md")
    );
    assert_eq!(top["section_path"], json!(["Dropout"]));
    assert_eq!(
        (top["chunk_index"].as_u64(), top["chunk_count"].as_u64()),
        (Some(0), Some(2))
    );
    assert!(
        top["preview"]
            .as_str()
            .unwrap()
            .starts_with("Dropout regularises")
    );
    assert!(top.get("text").is_none(), "full text only on request");
    for hit in hits(&response) {
        let score = hit["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&score), "{score}");
    }

    // Paged formats carry page spans; the chunk on page 2 is found by meaning.
    let response = f.json(&[
        "search",
        "which pigment absorbs light",
        "--library",
        "research",
        "--mode",
        "dense",
    ]);
    let top = &hits(&response)[0];
    assert!(
        top["source"].as_str().unwrap().ends_with("scan.pdf"),
        "{response:#}"
    );
    assert_eq!(top["page_start"], 2);
    assert_eq!(top["page_end"], 2);

    // DOCX headings become section paths; lexical mode finds exact words.
    let response = f.json(&[
        "search",
        "annual budget",
        "--library",
        "research",
        "--mode",
        "lexical",
        "--response-mode",
        "full",
    ]);
    let top = &hits(&response)[0];
    assert_eq!(top["section_path"], json!(["Budget overview"]));
    assert!(top["text"].as_str().unwrap().contains("allocates funds"));
    assert_eq!(top["title"], "Quarterly & Annual");

    // HTML chrome is not indexed.
    let response = f.json(&[
        "search",
        "tracking",
        "--library",
        "research",
        "--mode",
        "lexical",
    ]);
    assert!(hits(&response).is_empty(), "{response:#}");

    // Filters apply before ranking.
    let response = f.json(&[
        "search",
        "neural networks",
        "--library",
        "research",
        "--filter",
        r#"{"tags": "ml", "year": {"gte": 2010}}"#,
    ]);
    assert_eq!(hits(&response).len(), 1);
    let response = f.json(&[
        "search",
        "neural networks",
        "--library",
        "research",
        "--filter",
        r#"{"year": {"lt": 2000}}"#,
    ]);
    assert!(hits(&response).is_empty());

    // ids_only is lean.
    let response = f.json(&[
        "search",
        "gradient",
        "--library",
        "research",
        "--response-mode",
        "ids_only",
    ]);
    let top = &hits(&response)[0];
    assert!(
        top.get("title").is_none() && top.get("preview").is_none() && top["chunk_id"].is_string()
    );

    // get, ls, inspect
    let id =
        hits(&f.json(&["search", "gradient descent", "--library", "research"]))[0]["document_id"]
            .as_str()
            .unwrap()
            .to_string();
    let document = f.json(&["get", &id, "--chunks"]);
    assert_eq!(
        document["chunks"].as_array().unwrap().len() as u64,
        document["chunk_count"].as_u64().unwrap()
    );
    let listing = f.json(&["ls", "research"]);
    assert_eq!(listing["total"], 5);
    let stats = f.json(&["inspect", "research"]);
    assert_eq!(stats["info"]["document_count"], 5);
    assert_eq!(stats["index"]["vectors"], stats["info"]["chunk_count"]);
    assert_eq!(
        stats["index"]["lexical_chunks"],
        stats["info"]["chunk_count"]
    );
    assert_eq!(
        stats["info"]["space"]["model"],
        "sentence-transformers/all-MiniLM-L6-v2"
    );

    // Dedup: unchanged → skipped; changed → replaced.
    let again = f.json(&["ingest", &f.path("papers"), "--library", "research"]);
    assert_eq!(
        (again["skipped"].as_u64(), again["indexed"].as_u64()),
        (Some(5), Some(0))
    );
    f.file(
        "papers/notes/gd.txt",
        b"Stochastic gradient descent samples minibatches.",
    );
    let again = f.json(&["ingest", &f.path("papers"), "--library", "research"]);
    assert_eq!(
        (again["replaced"].as_u64(), again["skipped"].as_u64()),
        (Some(1), Some(4))
    );
    let response = f.json(&[
        "search",
        "learning rate step size",
        "--library",
        "research",
        "--mode",
        "lexical",
    ]);
    assert!(
        hits(&response)
            .iter()
            .all(|h| h["document_id"] != json!(id)),
        "the old version is gone"
    );

    // rm
    f.json(&["rm", &id]);
    assert_eq!(f.json(&["ls", "research"])["total"], 4);
    let out = f.run(&["get", &id]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("does not exist"));

    // A note of headings alone (a title, an outline) is indexed by them.
    f.file(
        "notes/stub.md",
        b"# Quarterly planning\n\n## Open questions\n",
    );
    let report = f.json(&["ingest", &f.path("notes/stub.md"), "--library", "notes"]);
    assert_eq!(
        (report["indexed"].as_u64(), report["failed"].as_u64()),
        (Some(1), Some(0)),
        "{report:#}"
    );
    let response = f.json(&[
        "search",
        "quarterly planning",
        "--library",
        "notes",
        "--mode",
        "lexical",
    ]);
    assert!(
        hits(&response)[0]["source"]
            .as_str()
            .unwrap()
            .ends_with("notes/stub.md"),
        "{response:#}"
    );
}

#[test]
fn bad_input_gets_a_clear_error_and_changes_nothing() {
    let mut f = Folio::new();
    f.file("ok.md", b"# Fine\n\nA perfectly fine document about tea.");
    f.json(&["ingest", &f.path("ok.md"), "--library", "lib"]);
    let before = (
        f.json(&["ls", "lib"]),
        f.json(&["inspect", "lib"])["info"].clone(),
    );

    f.file("garbage.txt", &[0u8, 159, 146, 150, 0, 7, 1, 2, 3]);
    f.file("zero.md", b"");
    let full = folio_testkit::pdf(&["Truncated text"]);
    f.file("truncated.pdf", &full[..full.len() / 2]);
    f.file("big.txt", &vec![b'a'; 20_000]);
    let bomb = folio_testkit::docx(&format!(
        "<w:p><w:r><w:t>{}</w:t></w:r></w:p>",
        "0".repeat(3 << 20)
    ));
    f.file("bomb.docx", &bomb);
    f.env.push(("FOLIO_MAX_FILE_BYTES".into(), "10000".into()));
    let config = f.file("folio.toml", b"[limits]\nmax_compression_ratio = 50\n");

    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec!["ingest".into(), f.path("missing.pdf")],
            1,
            "no such file",
        ),
        (vec!["ingest".into(), f.path("garbage.txt")], 1, "binary"),
        (vec!["ingest".into(), f.path("zero.md")], 1, "empty"),
        (
            vec!["ingest".into(), f.path("truncated.pdf")],
            1,
            "truncated.pdf: [",
        ),
        (
            vec!["ingest".into(), f.path("big.txt")],
            1,
            "over the limit",
        ),
        (
            vec![
                "--config".into(),
                config.display().to_string(),
                "ingest".into(),
                f.path("bomb.docx"),
            ],
            1,
            "decompression bomb",
        ),
        (
            vec!["ingest".into(), "http://127.0.0.1:9/secret".into()],
            1,
            "non-public address",
        ),
        (
            vec![
                "ingest".into(),
                "http://169.254.169.254/latest/meta-data/".into(),
            ],
            1,
            "non-public address",
        ),
    ];
    for (mut args, expected, needle) in cases {
        args.extend(["--library".to_string(), "lib".to_string()]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = f.run(&refs);
        assert_eq!(code(&out), expected, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
    for (args, expected, needle) in [
        (
            vec!["search", "tea", "--library", "nope"],
            1,
            "does not exist",
        ),
        (vec!["search", "", "--library", "lib"], 2, "empty"),
        (
            vec!["search", "tea", "--library", "lib", "--filter", "{not json"],
            2,
            "not JSON",
        ),
        (
            vec![
                "search",
                "tea",
                "--library",
                "lib",
                "--filter",
                r#"{"x": {"near": 1}}"#,
            ],
            2,
            "unknown operator",
        ),
        (
            vec!["search", "tea", "--library", "bad name!"],
            2,
            "invalid library name",
        ),
        (
            vec!["search", "tea", "--library", "lib", "--top-k", "0"],
            2,
            "top_k",
        ),
        (vec!["get", "not-an-id"], 2, "16 lower-case hex"),
        (vec!["frobnicate"], 2, "unrecognized subcommand"),
    ] {
        let out = f.run(&args);
        assert_eq!(code(&out), expected, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    // A folder ingest reports the failures and carries on with the rest.
    f.file("mixed/good.txt", b"Green tea contains catechins.");
    f.file("mixed/bad.txt", &[0u8, 1, 2, 3, 0, 5]);
    let out = f.run(&["ingest", &f.path("mixed"), "--library", "other", "--json"]);
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (report["indexed"].as_u64(), report["failed"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(stderr(&out).contains("bad.txt"));

    let after = (
        f.json(&["ls", "lib"]),
        f.json(&["inspect", "lib"])["info"].clone(),
    );
    assert_eq!(before, after, "bad input must leave the library as it was");
}

/// Many small documents, so an ingest takes a few seconds.
fn many_files(f: &Folio, folder: &str, count: usize) {
    for i in 0..count {
        let text = format!(
            "Document number {i} of {folder} discusses topic {} in some detail. It mentions enzymes, galaxies, tariffs and poetry in turn, \
             and closes with remark {} about measurement.\n\nA second paragraph for document {i} keeps the chunker honest.",
            i % 17,
            i * 7
        );
        f.file(&format!("{folder}/doc{i:04}.txt"), text.as_bytes());
    }
}

fn wait_for(mut condition: impl FnMut() -> bool, limit: Duration) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < limit, "timed out waiting");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn document_count(f: &Folio, library: &str) -> u64 {
    let out = f.run(&["ls", library, "--json"]);
    if !out.status.success() {
        return 0;
    }
    serde_json::from_slice::<Value>(&out.stdout)
        .map(|v| v["total"].as_u64().unwrap_or(0))
        .unwrap_or(0)
}

#[test]
fn kill_9_during_ingest_leaves_a_consistent_store() {
    let f = Folio::new();
    many_files(&f, "bulk", 400);
    let mut child: Child = f
        .command(&["ingest", &f.path("bulk"), "--library", "bulk"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        || document_count(&f, "bulk") >= 20,
        Duration::from_secs(120),
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let indexed = document_count(&f, "bulk");
    assert!(
        indexed < 400,
        "the ingest finished before it could be killed"
    );
    // Every committed document is whole in every index.
    let stats = f.json(&["inspect", "bulk"]);
    let chunks = &stats["info"]["chunk_count"];
    assert_eq!(&stats["index"]["vectors"], chunks, "{stats:#}");
    assert_eq!(&stats["index"]["lexical_chunks"], chunks, "{stats:#}");
    let listing = f.json(&["ls", "bulk", "--limit", "1000"]);
    for doc in listing["documents"].as_array().unwrap() {
        assert_eq!(doc["chunk_count"], 1, "each small file is one chunk: {doc}");
    }
    let hit = f.json(&["search", "enzymes galaxies tariffs", "--library", "bulk"]);
    assert!(!hits(&hit).is_empty());
    // Re-running finishes the job; what was committed is skipped.
    let report = f.json(&["ingest", &f.path("bulk"), "--library", "bulk"]);
    assert_eq!(report["skipped"].as_u64(), Some(indexed));
    assert_eq!(report["indexed"].as_u64(), Some(400 - indexed));
    assert_eq!(document_count(&f, "bulk"), 400);
    // The ingest deferred its vector index and settled it before exiting:
    // the saved index holds every chunk, so no later search replays them.
    assert_eq!(saved_vectors(&f), 400);
}

// Issue 33: with mimalloc's arena committed when reserved (its default on
// Linux), an ingest peaked about 20 MB higher. The workspace's build
// configuration (.cargo/config.toml) makes on-demand commit the default;
// mimalloc reports its options when asked to be verbose.
#[test]
fn the_allocator_commits_its_arena_on_demand() {
    let out = Command::new(env!("CARGO_BIN_EXE_folio"))
        .arg("--version")
        .env("MIMALLOC_VERBOSE", "1")
        .env_remove("MIMALLOC_ARENA_EAGER_COMMIT")
        .output()
        .unwrap();
    assert!(out.status.success());
    let options = stderr(&out);
    assert!(
        options
            .lines()
            .any(|l| l.trim() == "option 'arena_eager_commit': 0"),
        "{options}"
    );
}

/// How many vectors the saved vector index of the data directory's only
/// library holds.
fn saved_vectors(f: &Folio) -> u64 {
    let indexes: Vec<_> = std::fs::read_dir(f.data.path().join("indexes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(indexes.len(), 1, "{indexes:?}");
    let meta: Value =
        serde_json::from_slice(&std::fs::read(indexes[0].join("vectors.json")).unwrap()).unwrap();
    meta["count"].as_u64().unwrap()
}

#[test]
fn several_processes_share_one_data_directory() {
    let f = Folio::new();
    many_files(&f, "a", 150);
    many_files(&f, "b", 20);
    f.file("seed.txt", b"Seed document about lighthouses.");
    f.json(&["ingest", &f.path("seed.txt"), "--library", "shared"]);
    let mut writer = f
        .command(&["ingest", &f.path("a"), "--library", "shared"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(
        || document_count(&f, "shared") > 1,
        Duration::from_secs(120),
    );
    // Readers work while the writer runs.
    for _ in 0..3 {
        let response = f.json(&["search", "lighthouses", "--library", "shared"]);
        assert!(!hits(&response).is_empty());
    }
    // A second writer runs beside the first: each takes the write lock
    // for its own writes only, so both finish.
    let second = f
        .command(&["ingest", &f.path("b"), "--library", "shared", "--json"])
        .output()
        .unwrap();
    assert!(second.status.success(), "{}", stderr(&second));
    let status = writer.wait().unwrap();
    let mut err = String::new();
    writer
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    assert_eq!(document_count(&f, "shared"), 171);
}

/// Serves `routes` over loopback HTTP for `requests` requests.
fn serve(
    routes: Vec<(&'static str, String, &'static str)>,
    requests: usize,
) -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]);
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            let response = match routes.iter().find(|(p, _, _)| *p == path) {
                Some((_, body, "redirect")) => format!(
                    "HTTP/1.1 302 Found\r\nLocation: {body}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                ),
                Some((_, body, kind)) => format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                ),
                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_string(),
            };
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (base, handle)
}

#[test]
fn urls_are_fetched_with_redirects_checked() {
    let f = Folio::new();
    let page = "<html><head><title>Tide tables</title></head><body><h1>Tides</h1><p>Spring tides occur near new and full moon.</p></body></html>";
    let (base, server) = serve(
        vec![
            ("/page.html", page.to_string(), "text/html"),
            ("/go", "/page.html".into(), "redirect"),
        ],
        2,
    );
    // Loopback is refused unless allowed.
    let out = f.run(&["ingest", &format!("{base}/page.html"), "--library", "web"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("non-public"), "{}", stderr(&out));
    let report = f.json(&[
        "ingest",
        &format!("{base}/go"),
        "--library",
        "web",
        "--allow-private-urls",
    ]);
    assert_eq!(report["indexed"], 1, "{report:#}");
    let response = f.json(&["search", "when do spring tides happen", "--library", "web"]);
    let top = &hits(&response)[0];
    assert_eq!(top["title"], "Tide tables");
    assert_eq!(top["source_kind"], "url");
    assert_eq!(top["metadata"]["url"], format!("{base}/page.html"));
    server.join().unwrap();
}

// Issue 16: with HTTP(S)_PROXY set, the proxy resolved and reached the host
// itself, past folio's address check. Fetches go direct: a proxy listening
// on loopback receives nothing.
#[test]
fn url_fetches_ignore_proxy_settings() {
    let mut f = Folio::new();
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    proxy.set_nonblocking(true).unwrap();
    for name in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        f.env.push((name.into(), proxy_url.clone()));
    }
    f.env.push(("NO_PROXY".into(), String::new()));
    let page = "<html><head><title>Moon phases</title></head><body><p>The moon waxes and wanes over a month.</p></body></html>";
    let (base, server) = serve(vec![("/moon.html", page.to_string(), "text/html")], 1);
    let report = f.json(&[
        "ingest",
        &format!("{base}/moon.html"),
        "--library",
        "web",
        "--allow-private-urls",
    ]);
    assert_eq!(report["indexed"], 1, "{report:#}");
    server.join().unwrap();
    assert!(
        proxy.accept().is_err(),
        "the proxy was contacted: the address check can be bypassed"
    );
}

#[test]
fn eval_reports_beir_metrics_and_writes_the_run() {
    let f = Folio::new();
    let dir = f.files.path().join("beir");
    let docs = [
        (
            "d1",
            "Coffee",
            "Caffeine in coffee blocks adenosine receptors and increases alertness.",
        ),
        (
            "d2",
            "Volcanoes",
            "Magma rises through the crust and erupts as lava from volcanoes.",
        ),
        (
            "d3",
            "Bees",
            "Honey bees communicate the location of flowers with a waggle dance.",
        ),
        (
            "d4",
            "Tides",
            "The gravitational pull of the moon causes ocean tides.",
        ),
    ];
    let corpus: Vec<String> = docs
        .iter()
        .map(|(id, t, x)| json!({"_id": id, "title": t, "text": x}).to_string())
        .collect();
    f.file("beir/corpus.jsonl", corpus.join("\n").as_bytes());
    let queries = [
        ("q1", "why does coffee keep you awake"),
        ("q2", "how do bees share where flowers are"),
        ("q3", "what causes tides"),
    ];
    let lines: Vec<String> = queries
        .iter()
        .map(|(id, t)| json!({"_id": id, "text": t}).to_string())
        .collect();
    f.file("beir/queries.jsonl", lines.join("\n").as_bytes());
    f.file(
        "beir/qrels/test.tsv",
        b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\nq3\td4\t1\n",
    );
    let run = f.files.path().join("run.json");
    let report = f.json(&[
        "eval",
        dir.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
    ]);
    assert_eq!(report["queries"], 3);
    assert_eq!(report["documents"], 4);
    assert!(report["ndcg_at_10"].as_f64().unwrap() > 0.99, "{report:#}");
    assert_eq!(report["recall_at_100"].as_f64(), Some(1.0));
    let written: Value = serde_json::from_slice(&std::fs::read(&run).unwrap()).unwrap();
    assert_eq!(written.as_object().unwrap().len(), 3);
    assert!(written["q1"]["d1"].as_f64().is_some());
    // A second run reuses the scratch library.
    let report = f.json(&["eval", dir.to_str().unwrap(), "--mode", "lexical"]);
    assert_eq!(report["ingest_skipped"], 4);
}

#[test]
fn a_library_is_pinned_to_its_model_until_rebuilt() {
    let mut f = Folio::new();
    f.file(
        "a.md",
        b"# Owls\n\nOwls hunt at night using silent flight and keen hearing.",
    );
    f.json(&["ingest", &f.path("a.md"), "--library", "pinned"]);
    // The same weights under another model id are another embedding space.
    f.env
        .push(("FOLIO_MODEL_ID".into(), "example/other-model".into()));
    f.file("b.md", b"# Bats\n\nBats navigate by echolocation.");
    let out = f.run(&["ingest", &f.path("b.md"), "--library", "pinned"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("pinned to another embedding space"),
        "{}",
        stderr(&out)
    );
    let out = f.run(&["search", "owls", "--library", "pinned"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("folio rebuild"), "{}", stderr(&out));
    // Lexical search needs no model and keeps working.
    assert_eq!(
        hits(&f.json(&["search", "owls", "--library", "pinned", "--mode", "lexical"])).len(),
        1
    );
    let rebuilt = f.json(&["rebuild", "pinned"]);
    assert_eq!(rebuilt["chunks"], 1);
    assert_eq!(
        f.json(&["inspect", "pinned"])["info"]["space"]["model"],
        "example/other-model"
    );
    assert_eq!(
        hits(&f.json(&["search", "nocturnal birds", "--library", "pinned"])).len(),
        1
    );
    f.json(&["ingest", &f.path("b.md"), "--library", "pinned"]);
}

#[test]
fn long_documents_are_cut_to_the_model_window() {
    let f = Folio::new();
    let mut text = String::from("# Long report\n\n");
    for section in 0..6 {
        text.push_str(&format!("## Part {section}\n\n"));
        for sentence in 0..40 {
            text.push_str(&format!(
                "Sentence {sentence} of part {section} describes electrochemical impedance spectroscopy measurements in detail. "
            ));
        }
        text.push_str("\n\n");
    }
    text.push_str(&"Pneumonoultramicroscopicsilicovolcanoconiosis".repeat(200));
    f.file("long.md", text.as_bytes());
    let report = f.json(&["ingest", &f.path("long.md"), "--library", "long"]);
    let id = report["items"][0]["document_id"]
        .as_str()
        .unwrap()
        .to_string();
    let document = f.json(&["get", &id, "--chunks", "--text"]);
    let body = document["text"].as_str().unwrap();
    let chars: Vec<char> = body.chars().collect();
    let chunks = document["chunks"].as_array().unwrap();
    assert!(chunks.len() > 6, "{} chunks", chunks.len());
    for chunk in chunks {
        // 256-token window less [CLS] and [SEP], measured by the real tokenizer.
        assert!(chunk["token_count"].as_u64().unwrap() <= 254, "{chunk}");
        let (start, end) = (
            chunk["char_start"].as_u64().unwrap() as usize,
            chunk["char_end"].as_u64().unwrap() as usize,
        );
        assert_eq!(
            chars[start..end].iter().collect::<String>(),
            chunk["text"].as_str().unwrap()
        );
        let section = chunk["section_path"].as_array().unwrap();
        assert_eq!(section[0], "Long report", "{chunk}");
    }
    // Nothing is lost: every sentence lands in some chunk.
    let joined: String = chunks
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join(" ");
    for section in 0..6 {
        assert!(
            joined.contains(&format!("Sentence 39 of part {section} ")),
            "part {section}"
        );
    }
}

#[test]
fn scanned_pdfs_are_read_by_ocr_or_refused_with_the_reason() {
    let mut f = Folio::new();
    let cover = folio_testkit::render("Annual report of the mountain weather station", 200);
    let body = folio_testkit::render(
        "Snowfall in the northern valley doubled during the winter of that year",
        200,
    );
    let stamp = Some("Digitised by the archive");
    f.file(
        "scan.pdf",
        &folio_testkit::scanned_pdf(&[(&cover, None), (&body, stamp)]),
    );

    // Read with the default languages (en, de): its text is searchable,
    // on its page, and the document says how it was read.
    let report = f.json(&["ingest", &f.path("scan.pdf"), "--library", "scans"]);
    let item = &report["items"][0];
    assert_eq!(item["status"], "indexed", "{report}");
    assert_eq!(item["pages"], 2);
    assert!(item.get("warnings").is_none(), "{item}");
    let document = f.json(&["get", item["document_id"].as_str().unwrap(), "--text"]);
    let ocr = &document["metadata"]["ocr"];
    assert_eq!(ocr["languages"], json!(["eng", "deu"]));
    assert_eq!(ocr["pages"], "1-2");
    assert!(ocr["engine"].as_str().unwrap().starts_with("tesseract"));
    let text = document["text"].as_str().unwrap().to_lowercase();
    assert!(
        text.contains("snowfall in the northern valley doubled"),
        "{text}"
    );
    assert_eq!(
        text.matches("digitised by the archive").count(),
        1,
        "the page's OCR text (stamp included) replaces its text layer: {text}"
    );
    let found = f.json(&[
        "search",
        "how much snow fell in the valley",
        "-l",
        "scans",
        "--response-mode",
        "full",
    ]);
    let top = &hits(&found)[0];
    assert_eq!(top["document_id"], item["document_id"]);
    assert!(top["text"].as_str().unwrap().contains("Snowfall"), "{top}");
    assert_eq!(top["page_end"], 2, "{top}");

    // An image is read when named; a folder walk leaves images out.
    f.file("album/page.png", &body.to_png());
    f.file(
        "album/notes.md",
        b"# Notes\n\nThe station logbook is kept in the archive.",
    );
    let report = f.json(&["ingest", &f.path("album/page.png"), "--library", "images"]);
    let item = &report["items"][0];
    assert_eq!(
        (&item["status"], &item["format"]),
        (&json!("indexed"), &json!("image"))
    );
    let document = f.json(&["get", item["document_id"].as_str().unwrap(), "--text"]);
    assert!(
        document["text"]
            .as_str()
            .unwrap()
            .contains("Snowfall in the northern valley"),
        "{document}"
    );
    assert_eq!(document["metadata"]["ocr"]["pages"], "1");
    let walked = f.json(&["ingest", &f.path("album"), "--library", "walked"]);
    let sources: Vec<&str> = walked["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["source"].as_str().unwrap())
        .collect();
    assert!(
        sources.len() == 1 && sources[0].ends_with("notes.md"),
        "{sources:?}"
    );

    // An explicit language list applies when the document names none.
    let report = f.json(&[
        "ingest",
        &f.path("scan.pdf"),
        "--library",
        "german",
        "--ocr-languages",
        "de",
    ]);
    let document = f.json(&["get", report["items"][0]["document_id"].as_str().unwrap()]);
    assert_eq!(document["metadata"]["ocr"]["languages"], json!(["deu"]));

    // Without OCR a scan is refused with the reason, and nothing is written.
    f.file("cover.pdf", &folio_testkit::scanned_pdf(&[(&cover, None)]));
    f.env.push(("FOLIO_OCR".into(), "off".into()));
    let out = f.run(&["ingest", &f.path("cover.pdf"), "--library", "off"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("[empty_content]"), "{}", stderr(&out));
    assert!(stderr(&out).contains("OCR is off"), "{}", stderr(&out));
    assert_eq!(document_count(&f, "off"), 0);

    // Tesseract missing: a scan fails saying so; a scan with some text (the
    // stamp) is indexed with a warning naming the unread pages.
    f.env.clear();
    let empty = tempfile::tempdir().unwrap();
    f.env
        .push(("PATH".into(), empty.path().display().to_string()));
    let out = f.run(&["ingest", &f.path("cover.pdf"), "--library", "bare"]);
    assert_eq!(code(&out), 1);
    let message = stderr(&out);
    assert!(
        message.contains("tesseract (Debian package tesseract-ocr)")
            && message.contains("not found on PATH"),
        "{message}"
    );
    assert_eq!(document_count(&f, "bare"), 0);
    let stamped = folio_testkit::scanned_pdf(&[(
        &body,
        Some("Digitised by the mountain archive from the original weather station logbook"),
    )]);
    f.file("stamped.pdf", &stamped);
    let out = f.run(&[
        "ingest",
        &f.path("stamped.pdf"),
        "--library",
        "bare",
        "--json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: ")
            && stderr(&out).contains("page 1 without a text layer not read"),
        "{}",
        stderr(&out)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = &report["items"][0]["warnings"];
    assert!(
        warnings[0].as_str().unwrap().contains("OCR is unavailable"),
        "{report}"
    );
    assert_eq!(document_count(&f, "bare"), 1);
}

// Issue 16: logs written to a file or a pipe (MCP clients save stderr to
// log files) carried ANSI colour codes.
#[test]
fn logs_to_a_pipe_carry_no_colour_codes() {
    let mut f = Folio::new();
    f.file("a.md", b"# A\n\nSome words about colour.");
    f.env.push(("FOLIO_LOG".into(), "debug".into()));
    let out = f.run(&["ingest", &f.path("a.md"), "--library", "logs"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let logs = stderr(&out);
    assert!(logs.contains("DEBUG"), "no log lines to check: {logs}");
    assert!(!logs.contains('\u{1b}'), "escape codes in piped logs");
}

/// A small cross-encoder with random weights, made by
/// scripts/cross_encoder.py with the set-up virtualenv's Python.
fn tiny_cross_encoder(dir: &std::path::Path) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = model_dir().join("../../setup-venv/bin/python");
    let status = Command::new(&python)
        .arg(root.join("scripts/cross_encoder.py"))
        .args(["make", dir.to_str().unwrap(), "--tokenizer"])
        .arg(model_dir())
        .status()
        .expect("python runs (scripts/setup.sh makes its virtualenv)");
    assert!(status.success(), "making the test cross-encoder failed");
}

/// (chunk id, score) of each hit.
fn scores(response: &Value) -> Vec<(String, f64)> {
    hits(response)
        .iter()
        .map(|h| {
            (
                h["chunk_id"].as_str().unwrap().to_string(),
                h["score"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_cross_encoder_reranks_the_best_candidates_within_its_budget() {
    let mut f = Folio::new();
    research_corpus(&f);
    f.json(&["ingest", &f.path("papers"), "--library", "research"]);
    let query = "how do plants store the energy of light";
    let search = |f: &Folio, extra: &[&str]| {
        let mut args = vec!["search", query, "--library", "research", "-k", "50"];
        args.extend_from_slice(&["--no-group"]);
        args.extend_from_slice(extra);
        f.json(&args)
    };

    // Asking for a reranker that is not configured is a clear error.
    let out = f.run(&["search", query, "--library", "research", "--rerank"]);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("no reranker is configured"),
        "{}",
        stderr(&out)
    );

    let model = f.files.path().join("cross-encoder");
    tiny_cross_encoder(&model);
    f.env
        .push(("FOLIO_RERANK_MODEL".into(), model.display().to_string()));
    // Configured but off by default: the fused order, no reranker fields.
    let plain = search(&f, &[]);
    assert!(plain.get("reranked").is_none(), "{plain:#}");
    assert!(hits(&plain).iter().all(|h| h.get("rerank_score").is_none()));
    let fused: std::collections::HashMap<String, f64> = scores(&plain).into_iter().collect();
    assert!(fused.len() >= 5, "every chunk is a candidate: {plain:#}");

    // Reranked: every candidate (fewer than the default 20) was read, and
    // each score is half its fused score plus half its cross-encoder score
    // scaled over the candidates.
    let reranked = search(&f, &["--rerank"]);
    assert_eq!(reranked["reranked"], fused.len(), "{reranked:#}");
    assert!(reranked["rerank_ms"].as_f64().unwrap() > 0.0);
    let raw: Vec<f64> = hits(&reranked)
        .iter()
        .map(|h| h["rerank_score"].as_f64().expect("every hit was read"))
        .collect();
    let (min, max) = raw
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
            (lo.min(r), hi.max(r))
        });
    assert!(max - min > 1e-6, "the cross-encoder tells the chunks apart");
    let mut previous = f64::INFINITY;
    for ((chunk, score), r) in scores(&reranked).iter().zip(&raw) {
        let want = 0.5 * fused[chunk] + 0.5 * (r - min) / (max - min);
        assert!((score - want).abs() < 1e-4, "{chunk}: {score} != {want}");
        assert!(*score <= previous + 1e-9, "sorted by the blended score");
        previous = *score;
    }
    let order = |r: &Value| scores(r).into_iter().map(|(c, _)| c).collect::<Vec<_>>();
    assert_ne!(order(&reranked), order(&plain), "the reranker moved hits");

    // A budget of zero reads nothing: the fused order, unchanged.
    let config = f.file("rerank.toml", b"[rerank]\nbudget_ms = 0\n");
    f.env
        .push(("FOLIO_CONFIG".into(), config.display().to_string()));
    let out_of_time = search(&f, &["--rerank"]);
    assert!(out_of_time.get("reranked").is_none(), "{out_of_time:#}");
    assert_eq!(scores(&out_of_time), scores(&plain));

    // Enabled in the configuration: searches rerank unless told not to.
    f.file("rerank.toml", b"[rerank]\nenabled = true\ncandidates = 2\n");
    let two = search(&f, &[]);
    assert_eq!(two["reranked"], 2);
    let read = hits(&two)
        .iter()
        .filter(|h| h.get("rerank_score").is_some())
        .count();
    assert_eq!(read, 2, "only the best two fused candidates were read");
    assert_eq!(scores(&search(&f, &["--no-rerank"])), scores(&plain));

    // A model folder that is not there fails the reranked search clearly,
    // and nothing else.
    f.env
        .push(("FOLIO_RERANK_MODEL".into(), "/nonexistent/model".into()));
    let out = f.run(&["search", query, "--library", "research", "--rerank"]);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains("/nonexistent/model"),
        "{}",
        stderr(&out)
    );
    assert_eq!(scores(&search(&f, &["--no-rerank"])), scores(&plain));
}

/// Issue 30: the names documents repeat are found while ingesting, listed
/// by `folio entities` (most mentioned first, by type) and described by
/// `folio entity` (documents, related names, evidence), with the real
/// model and parsers; an unknown name exits 1 with not_found.
#[test]
fn entities_found_while_ingesting_are_listed_and_described() {
    let f = Folio::new();
    f.file(
        "kb/deal.md",
        b"# Deal\n\nAcme Corp. signed with Globex Inc. in March. Later Globex Inc. paid Acme Corp. again.\n",
    );
    f.file(
        "kb/audit.md",
        b"# Audit\n\nThe auditors met Jane Roe at Acme Corp. twice. Jane Roe signed for Acme Corp.\n",
    );
    f.file("kb/plain.txt", b"Nothing here names anyone at all.\n");
    let out = f.run(&["ingest", &f.path("kb"), "--library", "kb"]);
    assert!(out.status.success(), "{}", stderr(&out));

    let listed = f.json(&["entities", "kb"]);
    let said: Vec<(String, u64, u64)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["entity"].as_str().unwrap().to_string(),
                e["mentions"].as_u64().unwrap(),
                e["documents"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        said,
        vec![
            ("acme corp".into(), 4, 2),
            ("globex inc".into(), 2, 1),
            ("jane roe".into(), 2, 1),
        ]
    );
    let people = f.json(&["entities", "kb", "--type", "name"]);
    assert_eq!(people.as_array().unwrap().len(), 1);

    let card = f.json(&["entity", "kb", "ACME Corp"]);
    assert_eq!(card["kind"], "organization");
    assert_eq!(card["documents"], 2);
    let related: Vec<&str> = card["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["entity"].as_str().unwrap())
        .collect();
    assert_eq!(related, vec!["globex inc", "jane roe"]);
    let evidence = card["evidence"].as_array().unwrap();
    assert!(!evidence.is_empty());
    assert!(evidence.iter().all(|e| e["surface"] == "Acme Corp"));

    let out = f.run(&["--json", "entity", "kb", "Initech"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));

    // A declared list with bad lines is refused whole, each line named.
    f.file(
        "bad.csv",
        b"name,type,aliases,relations\nGlobex Industries,organization,Globex Inc,\n,person,,\nJane Roe,person,,member of\nGLOBEX INDUSTRIES,organization,,\n",
    );
    let out = f.run(&["entities", "import", &f.path("bad.csv"), "--library", "kb"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let said = stderr(&out);
    for line in ["line 3: name", "line 4: relations", "line 5: name"] {
        assert!(said.contains(line), "{line}: {said}");
    }
    assert_eq!(
        f.json(&["entity", "kb", "Globex Inc"])["entity"],
        "globex inc",
        "nothing was imported"
    );

    // A good list links its names and aliases in the stored documents.
    f.file(
        "vendors.csv",
        b"name,type,aliases,relations,country\nGlobex Industries,organization,Globex Inc,,DE\nJane Roe,person,,member of: Acme Corp,\n",
    );
    let imported = f.json(&[
        "entities",
        "import",
        &f.path("vendors.csv"),
        "--library",
        "kb",
    ]);
    assert_eq!(imported["declared"], 2);
    assert_eq!(imported["relinked"]["documents"], 3);
    let globex = f.json(&["entity", "kb", "globex inc."]);
    assert_eq!(globex["entity"], "globex industries");
    assert_eq!(globex["name"], "Globex Industries");
    assert_eq!(globex["matched_by"], "alias");
    assert_eq!(globex["attributes"]["country"], "DE");
    assert_eq!(globex["mentions"], 2);
    let jane = f.json(&["entity", "kb", "Jane Roe"]);
    assert_eq!(jane["kind"], "person");
    assert_eq!(jane["relations"][0]["entity"], "Acme Corp");
    // Relinking again changes nothing.
    let again = f.json(&["entities", "relink", "kb"]);
    assert_eq!(again["documents"], 3);
    assert_eq!(
        f.json(&["entity", "kb", "Globex Industries"])["mentions"],
        2
    );
}

/// Extraction workers are kept between documents: many PDFs take one
/// process; a refused document keeps its worker, a cancelled one loses it,
/// a worker is replaced after its quota, and concurrent extractions get
/// one each. Every text is checked against the page it came from.
#[test]
fn extraction_workers_are_reused_and_replaced() {
    use folio_engine::sandbox::{Extraction, extract};
    use folio_extract::Input;
    let Extraction::Worker(workers) =
        Extraction::worker(PathBuf::from(env!("CARGO_BIN_EXE_folio")))
    else {
        unreachable!()
    };
    let extraction = Extraction::Worker(workers.clone());
    let limits = folio_core::Limits::default();
    let never = || false;
    let pdf_text = |n: usize| {
        let page = format!("Page of document {n}");
        let bytes = folio_testkit::pdf(&[&page]);
        let input = Input {
            bytes: &bytes,
            name: Some("doc.pdf"),
            mime: None,
        };
        let (_, text) = extract(&extraction, input, &limits, &never).unwrap();
        let words: Vec<&str> = text.blocks.iter().map(|b| b.text.trim()).collect();
        assert_eq!(words.join(" "), page);
    };
    for n in 0..20 {
        pdf_text(n);
    }
    assert_eq!(workers.started(), 1);
    // A broken PDF is refused by the parser; the worker stays.
    let broken = b"%PDF-1.4 not really";
    let input = Input {
        bytes: broken,
        name: Some("broken.pdf"),
        mime: None,
    };
    let error = extract(&extraction, input, &limits, &never).unwrap_err();
    assert_eq!(error.code, folio_core::ErrorCode::MalformedInput, "{error}");
    pdf_text(20);
    assert_eq!(workers.started(), 1);
    // Cancelled mid-extraction: that worker is killed, the next is new.
    let bytes = folio_testkit::pdf(&["cancelled"]);
    let input = Input {
        bytes: &bytes,
        name: Some("c.pdf"),
        mime: None,
    };
    let error = extract(&extraction, input, &limits, &|| true).unwrap_err();
    assert!(error.to_string().contains("cancelled"), "{error}");
    pdf_text(21);
    assert_eq!(workers.started(), 2);
    // The second worker has done one document: its quota (100) ends it.
    for n in 22..121 {
        pdf_text(n);
    }
    assert_eq!(workers.started(), 2);
    pdf_text(121);
    assert_eq!(workers.started(), 3);
    // Two at once: two workers, both kept for what follows.
    std::thread::scope(|scope| {
        let a = scope.spawn(|| (200..210).for_each(pdf_text));
        let b = scope.spawn(|| (300..310).for_each(pdf_text));
        a.join().unwrap();
        b.join().unwrap();
    });
    let after_pair = workers.started();
    assert_eq!(after_pair, 4);
    std::thread::scope(|scope| {
        let a = scope.spawn(|| (400..405).for_each(pdf_text));
        let b = scope.spawn(|| (500..505).for_each(pdf_text));
        a.join().unwrap();
        b.join().unwrap();
    });
    assert_eq!(workers.started(), after_pair);
}

// Issue 50: a CSV in a library without a record schema is a document
// holding one table, whose rows a search finds and cites by line.
#[test]
fn a_csv_without_a_record_schema_is_a_table_cited_by_its_rows() {
    let f = Folio::new();
    let mut csv = String::from("Vendor,Item,Price (EUR)\n");
    for i in 0..300 {
        csv.push_str(&format!("Vendor{i} GmbH,Bolt M{i},0.{i:02}\n"));
    }
    csv.push_str("Zyxoplast Ltd,Flange K9,4.75\n");
    f.file("prices.csv", csv.as_bytes());
    let report = f.json(&["ingest", &f.path("prices.csv"), "--library", "t"]);
    assert_eq!(report["indexed"], 1, "{report}");
    assert_eq!(report["failed"], 0, "{report}");
    let found = f.json(&[
        "search",
        "Zyxoplast flange",
        "--library",
        "t",
        "--mode",
        "lexical",
        "--response-mode",
        "full",
    ]);
    let hit = &hits(&found)[0];
    assert_eq!(hit["format"], "csv", "{hit}");
    let text = hit["text"].as_str().unwrap();
    assert!(
        text.contains("| Zyxoplast Ltd | Flange K9 | 4.75 |"),
        "{text}"
    );
    // The last record is line 302 of the file; its chunk ends there.
    let path: Vec<&str> = hit["section_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(path[0], "Table 1", "{hit}");
    assert!(
        path[1].starts_with("rows ") && path[1].ends_with("–302"),
        "{hit}"
    );
    assert!(
        hit["context"]
            .as_str()
            .is_none_or(|c| c.contains("| Vendor | Item | Price (EUR) |")),
        "{hit}"
    );
}

/// A message of a mailbox, its "From " line first.
fn mbox_message(id: &str, subject: &str, body: &str) -> String {
    format!(
        "From ana@example.org Tue Mar  3 09:15:00 2026\nFrom: Ana Ruiz <ana@example.org>\n\
         Message-ID: <{id}@example.org>\nSubject: {subject}\nDate: Tue, 3 Mar 2026 09:15:00 +0100\n\n{body}\n\n"
    )
}

fn sources(f: &Folio, library: &str) -> Vec<String> {
    let listed = f.json(&["ls", library]);
    let mut sources: Vec<String> = listed["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["source"].as_str().unwrap().to_string())
        .collect();
    sources.sort();
    sources
}

// Issue 50: a mailbox is a document per message, keyed by its Message-ID,
// and a message's attachment folio reads is a document of its own linked
// to the message. A message gone from the mailbox takes its document with
// it; sync follows the file (unchanged, then removed).
#[test]
fn a_mailbox_is_a_document_per_message_and_follows_its_file() {
    let f = Folio::new();
    let first = mbox_message("m1", "Flange delivery", "The flanges arrive on Thursday.");
    let second = mbox_message("m2", "Gasket order", "Order forty gaskets from Globex.");
    let third = "From ana@example.org Tue Mar  3 10:00:00 2026\nFrom: Ana Ruiz <ana@example.org>\n\
                 Message-ID: <m3@example.org>\nSubject: Counts\nMIME-Version: 1.0\n\
                 Content-Type: multipart/mixed; boundary=\"b\"\n\n--b\nContent-Type: text/plain\n\n\
                 The counts are attached.\n--b\nContent-Type: text/csv; name=\"counts.csv\"\n\
                 Content-Disposition: attachment; filename=\"counts.csv\"\n\n\
                 Part,Count\nZyxoflange K9,12\n--b--\n\n";
    let mailbox = f.file(
        "mail/inbox.mbox",
        format!("{first}{second}{third}").as_bytes(),
    );
    let file = mailbox.display().to_string();
    let report = f.json(&["ingest", &file, "--library", "t"]);
    assert_eq!(
        (&report["indexed"], &report["failed"]),
        (&4.into(), &0.into()),
        "{report}"
    );
    let m3 = format!("{file}#<m3@example.org>");
    assert_eq!(
        sources(&f, "t"),
        [
            format!("{file}#<m1@example.org>"),
            format!("{file}#<m2@example.org>"),
            m3.clone(),
            format!("{m3}#counts.csv"),
        ]
    );
    let found = f.json(&[
        "search",
        "Zyxoflange",
        "--library",
        "t",
        "--mode",
        "lexical",
    ]);
    let hit = &hits(&found)[0];
    assert_eq!(hit["source"], format!("{m3}#counts.csv"), "{hit}");
    assert_eq!(hit["format"], "csv", "{hit}");
    assert_eq!(hit["metadata"]["container"], m3, "{hit}");
    assert_eq!(hit["metadata"]["message_subject"], "Counts", "{hit}");
    let found = f.json(&[
        "search",
        "gaskets Globex",
        "--library",
        "t",
        "--mode",
        "lexical",
    ]);
    let hit = &hits(&found)[0];
    assert_eq!(hit["title"], "Gasket order", "{hit}");
    assert_eq!(
        hit["metadata"]["from"][0], "Ana Ruiz <ana@example.org>",
        "{hit}"
    );

    // Read again unchanged: nothing embedded. Without the second message:
    // its document goes, the others are left as they are.
    let again = f.json(&["ingest", &file, "--library", "t"]);
    assert_eq!(
        (&again["skipped"], &again["chunks"]),
        (&4.into(), &0.into()),
        "{again}"
    );
    std::fs::write(&mailbox, format!("{first}{third}")).unwrap();
    let again = f.json(&["ingest", &file, "--library", "t"]);
    assert_eq!(
        (&again["skipped"], &again["indexed"]),
        (&3.into(), &0.into()),
        "{again}"
    );
    assert_eq!(sources(&f, "t").len(), 3);
    assert!(!sources(&f, "t").iter().any(|s| s.contains("m2@")));

    // Sync: the parts recorded their file's stat, so the mailbox is
    // unchanged; a message dropped from it is reported removed; deleted,
    // its documents go.
    let folder = f.path("mail");
    let synced = f.json(&["sync", &folder, "--library", "t"]);
    assert_eq!(synced["unchanged"], 1, "{synced}");
    assert_eq!(synced["removed"], serde_json::json!([]), "{synced}");
    std::fs::write(&mailbox, third).unwrap();
    let synced = f.json(&["sync", &folder, "--library", "t"]);
    assert_eq!(
        synced["removed"],
        serde_json::json!([format!("{file}#<m1@example.org>")]),
        "{synced}"
    );
    assert_eq!(sources(&f, "t").len(), 2);
    std::fs::remove_file(&mailbox).unwrap();
    let synced = f.json(&["sync", &folder, "--library", "t"]);
    assert_eq!(synced["removed"].as_array().unwrap().len(), 2, "{synced}");
    assert!(sources(&f, "t").is_empty());
}

// Issue 50: a folder's ZIP archive is read only when asked, each member a
// document under the archive's path (an image member is left out); sync
// follows the archive's members; an identifier ("QX-2291") finds the row
// naming it before a note holding its letters and its number apart.
#[test]
fn an_archive_in_a_folder_is_read_when_asked_and_followed_by_sync() {
    let f = Folio::new();
    f.file(
        "shelf/readme.md",
        b"# Shelf\n\nBins QX 7 and 2291 hold the QX parts: QX QX, 2291 2291.",
    );
    let members = |with_prices: bool| {
        let mut members: Vec<(&str, &[u8])> = vec![
            (
                "2024/minutes.md",
                b"# Minutes\n\nThe Quorvex valve was approved.",
            ),
            ("photo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ];
        if with_prices {
            members.push((
                "prices.csv",
                b"Part,Item,Price\nQX-2291,flange gasket,0.12\nQX-7,lock nut,0.07\n",
            ));
        }
        folio_testkit::zip(&members)
    };
    let archive = f.file("shelf/notes.zip", &members(true));
    let zip = archive.display().to_string();
    let folder = f.path("shelf");
    let report = f.json(&["ingest", &folder, "--library", "t"]);
    assert_eq!(report["indexed"], 1, "{report}");
    assert_eq!(sources(&f, "t"), [f.path("shelf/readme.md")]);

    let report = f.json(&["ingest", &folder, "--library", "t", "--archives"]);
    assert_eq!(
        (&report["indexed"], &report["failed"]),
        (&2.into(), &0.into()),
        "{report}"
    );
    let minutes = format!("{zip}#2024/minutes.md");
    let prices = format!("{zip}#prices.csv");
    assert_eq!(
        sources(&f, "t"),
        [minutes.clone(), prices.clone(), f.path("shelf/readme.md")]
    );
    let search = |query: &str| {
        let found = f.json(&["search", query, "--library", "t", "--mode", "lexical"]);
        hits(&found)[0].clone()
    };
    let hit = search("Quorvex");
    assert_eq!(hit["source"], minutes, "{hit}");
    assert_eq!(hit["metadata"]["container"], zip, "{hit}");
    assert_eq!(
        hit["metadata"]["archive_member"], "2024/minutes.md",
        "{hit}"
    );
    assert_eq!(search("QX-2291")["source"], prices);

    // Sync follows the members: unchanged, then one member gone; without
    // --archives the archive is no file of the folder's any more.
    let sync = |archives: bool| {
        let mut args = vec!["sync", &folder, "--library", "t"];
        if archives {
            args.push("--archives");
        }
        f.json(&args)
    };
    let synced = sync(true);
    assert_eq!(synced["unchanged"], 2, "{synced}");
    assert_eq!(synced["removed"], serde_json::json!([]), "{synced}");
    std::fs::write(&archive, members(false)).unwrap();
    let synced = sync(true);
    assert_eq!(synced["removed"], serde_json::json!([prices]), "{synced}");
    assert_eq!(sources(&f, "t").len(), 2);
    let synced = sync(false);
    assert_eq!(synced["removed"], serde_json::json!([minutes]), "{synced}");
    assert_eq!(sources(&f, "t"), [f.path("shelf/readme.md")]);
}

// Issue 50: with OCR on, the words of a figure's image are read where the
// image stands, on every format that embeds images, and found; with OCR
// off the document is its text without them.
#[test]
fn a_figure_s_words_are_read_by_ocr_where_it_stands() {
    let mut f = Folio::new();
    let fixtures =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../folio-extract/tests/fixtures");
    for name in [
        "figures.docx",
        "figures.odt",
        "figures.pptx",
        "figures.epub",
        "figures.pdf",
    ] {
        f.file(
            &format!("report/{name}"),
            &std::fs::read(fixtures.join(name)).unwrap(),
        );
    }
    let report = f.json(&["ingest", &f.path("report"), "--library", "figures"]);
    assert_eq!(report["indexed"], 5, "{report}");
    for item in report["items"].as_array().unwrap() {
        let id = item["document_id"].as_str().unwrap();
        let document = f.json(&["get", id, "--text"]);
        let text = document["text"].as_str().unwrap();
        let (intro, figure) = (
            // A slide has its title before the image.
            text.find("reports its output below")
                .or_else(|| text.find("Results"))
                .unwrap(),
            text.find("4812 units")
                .unwrap_or_else(|| panic!("{}: {text}", item["source"])),
        );
        assert!(intro < figure, "{text}");
        // A PDF's figure follows its page's text.
        let pdf = item["source"].as_str().unwrap().ends_with(".pdf");
        if let Some(caption) = text.find("Figure 1: Output by quarter") {
            assert_eq!(figure < caption, !pdf, "{text}");
        }
        assert_eq!(document["metadata"]["ocr"]["figures"], 1, "{document}");
    }
    let found = f.json(&[
        "search",
        "how many units did quarterly output reach",
        "-l",
        "figures",
        "--mode",
        "lexical",
    ]);
    assert!(
        hits(&found)[0]["preview"]
            .as_str()
            .unwrap()
            .contains("4812"),
        "{found}"
    );

    // OCR off: the documents are their text; a slide of nothing but its
    // title and the image is refused saying why.
    f.env.push(("FOLIO_OCR".into(), "off".into()));
    for name in ["figures.docx", "figures.odt", "figures.epub", "figures.pdf"] {
        let report = f.json(&[
            "ingest",
            &f.path(&format!("report/{name}")),
            "--library",
            "off",
        ]);
        assert_eq!(report["indexed"], 1, "{report}");
    }
    let found = f.json(&["search", "4812", "-l", "off", "--mode", "lexical"]);
    assert!(hits(&found).is_empty(), "{found}");
    let out = f.run(&["ingest", &f.path("report/figures.pptx"), "--library", "off"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("OCR is off"), "{}", stderr(&out));

    // Past the cap on images read, a figure is left unread, and said to be.
    f.env.retain(|(name, _)| name != "FOLIO_OCR");
    let config = f.file("capped.toml", b"[limits]\nmax_ocr_pages = 0\n");
    f.env
        .push(("FOLIO_CONFIG".into(), config.display().to_string()));
    let report = f.json(&[
        "ingest",
        &f.path("report/figures.docx"),
        "--library",
        "capped",
    ]);
    assert_eq!(report["indexed"], 1, "{report}");
    let warnings = report["items"][0]["warnings"].to_string();
    assert!(
        warnings.contains("1 figure image(s) not read: over the limit of 0 OCR images"),
        "{report}"
    );
}

/// Runs `args` with stdout read only until `keep` bytes, then closed, as
/// `folio … | head -c KEEP` does: what the process said and how it ended.
fn read_then_close(f: &Folio, args: &[&str], keep: usize) -> (Vec<u8>, Output) {
    use std::io::Read;
    let mut child = f
        .command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = vec![0; keep];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    let out = child.wait_with_output().unwrap();
    (head, out)
}

#[test]
fn a_reader_that_stops_reading_ends_the_command_quietly() {
    let f = Folio::new();
    // Printed with write_all (completions) and with println! (a document's
    // text): both far over a pipe's 64 KiB buffer.
    let (head, out) = read_then_close(&f, &["completions", "bash"], 100);
    assert!(
        head.starts_with(b"_folio()"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));

    let words: String = (0..40_000).map(|i| format!("word{i} ")).collect();
    f.file("long.txt", words.as_bytes());
    let report = f.json(&["ingest", &f.path("long.txt"), "--library", "long"]);
    assert_eq!(report["indexed"], 1, "{report:#}");
    let listed = f.json(&["ls", "long"]);
    let id = listed["documents"][0]["id"].as_str().unwrap().to_string();
    let (head, out) = read_then_close(&f, &["get", &id, "--text"], 1000);
    assert!(!head.is_empty());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    // The same with --json, written by serde.
    let (_, out) = read_then_close(&f, &["get", &id, "--text", "--json"], 1000);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    // Read whole, the same command prints every word.
    let whole = f.run(&["get", &id, "--text"]);
    assert!(String::from_utf8_lossy(&whole.stdout).contains("word39999"));
}
