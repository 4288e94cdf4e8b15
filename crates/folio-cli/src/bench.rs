//! `folio bench`: search latency, memory and disk on a synthetic library
//! (real query embedding, synthetic clustered chunk vectors), and encoder
//! throughput on a BEIR corpus. Run on a release build; the numbers go to
//! docs/benchmarks.md with the command that produced them.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use folio_core::{Chunk, ChunkId, Document, DocumentId, Filter, LibraryName, SourceKind};
use folio_embed::{CandleEncoder, ModelConfig, OnnxEncoder};
use folio_engine::{EmbedderConfig, Mode, ResponseMode, SearchRequest};
use folio_store::NewDocument;
use serde_json::json;

use crate::common::{self, Global, Outcome};
use crate::config::Overrides;
use crate::progress::Bar;

#[derive(Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchKind,
}

#[derive(Subcommand)]
pub enum BenchKind {
    /// Search latency, get-by-id latency, memory and disk on a synthetic library.
    Search {
        /// Chunks in the synthetic library.
        #[arg(long, default_value_t = 100_000)]
        chunks: usize,
        /// Timed queries per mode.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Only the measurements whose names contain this (e.g.
        /// `dense_vector_cached`), to profile one kind of search alone.
        #[arg(long)]
        only: Option<String>,
    },
    /// Encoder throughput on the first documents of a BEIR corpus.jsonl.
    Encoder {
        corpus: PathBuf,
        #[arg(long, default_value_t = 1000)]
        docs: usize,
        /// onnx, candle or both.
        #[arg(long, default_value = "both")]
        backends: String,
    },
}

/// A small deterministic generator (xorshift64*), so runs are comparable.
struct Rng(u64);

impl Rng {
    /// A generator for stream `n` of `seed` (splitmix64 of both: never the
    /// all-zero state xorshift cannot leave).
    fn seeded(seed: u64, n: u64) -> Self {
        let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Approximately normal (sum of uniforms).
    fn normal(&mut self) -> f32 {
        (0..4).map(|_| self.unit()).sum::<f32>() - 2.0
    }
}

const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mi", "ren", "sa", "tu", "vel", "no", "pra", "gi", "dor", "be", "xu", "fen", "qua",
    "ly", "mar", "ton", "si", "hep", "ro", "din", "cal", "mo",
];

fn vocabulary(size: usize, rng: &mut Rng) -> Vec<String> {
    (0..size)
        .map(|_| {
            (0..2 + rng.below(3))
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect()
        })
        .collect()
}

/// Zipf-like word choice: low indices are much more frequent.
fn zipf_word<'a>(vocabulary: &'a [String], rng: &mut Rng) -> &'a str {
    let x = rng.unit().max(1e-6);
    let index = ((vocabulary.len() as f32).powf(x) - 1.0) as usize;
    &vocabulary[index.min(vocabulary.len() - 1)]
}

fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let n = v
        .iter()
        .map(|x| x * x)
        .sum::<f32>()
        .sqrt()
        .max(f32::EPSILON);
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn summary(mut samples: Vec<f64>) -> serde_json::Value {
    samples.sort_by(f64::total_cmp);
    json!({
        "p50_ms": percentile(&samples, 0.5),
        "p95_ms": percentile(&samples, 0.95),
        "mean_ms": samples.iter().sum::<f64>() / samples.len().max(1) as f64,
        "n": samples.len(),
    })
}

fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

pub fn run(cli_args: &Global, overrides: &Overrides, args: &BenchArgs) -> Result<Outcome> {
    let report = match &args.what {
        BenchKind::Search {
            chunks,
            queries,
            only,
        } => search(cli_args, overrides, *chunks, *queries, only.as_deref())?,
        BenchKind::Encoder {
            corpus,
            docs,
            backends,
        } => encoder(cli_args, overrides, corpus, *docs, backends)?,
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(Outcome::Success)
}

const CHUNKS_PER_DOCUMENT: usize = 10;
const CLUSTERS: usize = 200;
const VECTOR_SEED: u64 = 0x5DEE_CE66_D1CE_4E5B;

/// Milliseconds of each search of `texts` (top 10, previews) after the
/// first ten, which warm the process.
fn time_searches(
    engine: &folio_engine::Engine,
    library: &LibraryName,
    texts: &[String],
    mode: Mode,
) -> Result<Vec<f64>> {
    let mut samples = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let mut request = SearchRequest::new(library.clone(), text.clone());
        request.mode = mode;
        request.top_k = 10;
        request.response_mode = ResponseMode::Preview;
        let t = Instant::now();
        engine.search(&request)?;
        if i >= 10 {
            samples.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(samples)
}

/// Embeds each text into the engine's query-vector cache.
fn cache_vectors(engine: &folio_engine::Engine, texts: &[String]) -> Result<()> {
    for text in texts {
        engine.cache_query_vector(text)?;
    }
    Ok(())
}

fn search(
    cli_args: &Global,
    overrides: &Overrides,
    chunks: usize,
    queries: usize,
    only: Option<&str>,
) -> Result<serde_json::Value> {
    let wanted = |name: &str| only.is_none_or(|only| name.contains(only));
    let engine = common::open(cli_args, overrides, true)?;
    let embedder = engine.embedder()?;
    let space = embedder.space().clone();
    let dim = space.dim as usize;
    let library = LibraryName::new(format!("bench.synthetic-{chunks}")).context("library name")?;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let vocabulary = vocabulary(20_000, &mut rng);
    let centroids: Vec<Vec<f32>> = (0..CLUSTERS)
        .map(|_| normalized((0..dim).map(|_| rng.normal()).collect()))
        .collect();
    let make_vector = |rng: &mut Rng| {
        let c = &centroids[rng.below(CLUSTERS)];
        normalized(c.iter().map(|x| x + 0.08 * rng.normal()).collect())
    };
    // Each chunk's vector from a generator of its own, so the recall check
    // can regenerate them instead of holding a million in memory.
    let chunk_vector = |j: usize| make_vector(&mut Rng::seeded(VECTOR_SEED, j as u64));
    let source_of = |d: usize| format!("synthetic/{d:06}.txt");

    let store = engine.store();
    let existing = store
        .library(&library)
        .map(|l| l.chunk_count as usize)
        .unwrap_or(0);
    let documents = chunks.div_ceil(CHUNKS_PER_DOCUMENT);
    let build_started = Instant::now();
    let bar = Bar::new("build", !cli_args.json);
    if existing != chunks {
        if existing > 0 {
            store.delete_library(&library)?;
        }
        store.create_library(&library, &space)?;
        folio_engine::Progress::start(&bar, documents as u64);
    }
    let mut batch = Vec::new();
    for d in 0..documents {
        let source = source_of(d);
        let id = DocumentId::derive(&library, &source);
        let n = CHUNKS_PER_DOCUMENT.min(chunks - d * CHUNKS_PER_DOCUMENT);
        let mut text = String::new();
        let mut doc_chunks = Vec::with_capacity(n);
        let mut vectors = Vec::with_capacity(n);
        for i in 0..n {
            let words: Vec<&str> = (0..120).map(|_| zipf_word(&vocabulary, &mut rng)).collect();
            let chunk_text = words.join(" ");
            let start = text.chars().count() as u64;
            text.push_str(&chunk_text);
            text.push_str("\n\n");
            let chunk_id = ChunkId::new(&id, i as u32);
            if existing != chunks {
                vectors.push(chunk_vector(d * CHUNKS_PER_DOCUMENT + i));
            }
            doc_chunks.push(Chunk {
                id: chunk_id,
                document_id: id.clone(),
                index: i as u32,
                count: n as u32,
                char_start: start,
                char_end: start + chunk_text.chars().count() as u64,
                text: chunk_text,
                page_start: None,
                page_end: None,
                section_path: vec![format!("Section {}", i / 3)],
                context: format!("Synthetic {d}\n"),
                token_count: 160,
            });
        }
        if existing == chunks {
            continue;
        }
        batch.push(NewDocument {
            document: Document {
                id: id.clone(),
                library: library.clone(),
                source,
                source_kind: SourceKind::File,
                format: "text".into(),
                title: Some(format!("Synthetic {d}")),
                content_hash: folio_core::content_hash(text.as_bytes()),
                metadata: json!({
                    "year": 2000 + (d % 25),
                    "group": format!("g{}", d % 10),
                    "bucket": d % 100,
                })
                .as_object()
                .cloned()
                .unwrap_or_default(),
                page_count: None,
                chunk_count: n as u32,
                text,
                ingested_at: engine.now(),
            },
            chunks: doc_chunks,
            vectors,
            space: space.clone(),
            mentions: Vec::new(),
            original: None,
        });
        if batch.len() == 500 {
            store.put_documents(std::mem::take(&mut batch), false)?;
            folio_engine::Progress::advance(&bar, 500, "");
        }
    }
    if !batch.is_empty() {
        let n = batch.len() as u64;
        store.put_documents(batch, false)?;
        folio_engine::Progress::advance(&bar, n, "");
    }
    // The writer brings the derived indexes up to date and saves them, as
    // a closing ingest does: the reopen below must find nothing to replay.
    let mut warm = SearchRequest::new(library.clone(), "warm".to_string());
    warm.top_k = 1;
    engine.search(&warm)?;
    store.flush()?;
    folio_engine::Progress::finish(&bar);
    let build_seconds = build_started.elapsed().as_secs_f64();
    drop(engine);

    // Reopen read-only, as a searching process would.
    let open_started = Instant::now();
    let engine = common::open(cli_args, overrides, false)?;
    // What a server reads ahead as it starts (`Shared::start_background`):
    // the searches below are a served library's.
    let warm_started = Instant::now();
    engine.warm()?;
    let warm_ms = warm_started.elapsed().as_secs_f64() * 1e3;
    // Fresh texts for each measurement: query vectors are cached per text,
    // and every number here includes embedding its query.
    let mut texts = |n: usize| -> Vec<String> {
        (0..n)
            .map(|_| {
                (0..6)
                    .map(|_| zipf_word(&vocabulary, &mut rng))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    let query_texts = texts(queries + 10);
    let mut first = SearchRequest::new(library.clone(), query_texts[0].clone());
    first.top_k = 10;
    engine.search(&first)?;
    let first_search_ms = open_started.elapsed().as_secs_f64() * 1e3;
    let mut results = serde_json::Map::new();
    for mode in [Mode::Hybrid, Mode::Lexical, Mode::Dense] {
        let query_texts = if mode == Mode::Hybrid {
            query_texts.clone()
        } else {
            texts(queries + 10)
        };
        let name = format!("search_{}", mode.as_str());
        if wanted(&name) {
            let samples = time_searches(&engine, &library, &query_texts, mode)?;
            results.insert(name, summary(samples));
        }
    }
    // The index's own work: the same kinds of search with each query's
    // vector already cached (a repeated question, or an agent's loop), on
    // fresh texts so no response is cached.
    for mode in [Mode::Hybrid, Mode::Dense] {
        let query_texts = texts(queries + 10);
        let name = format!("search_{}_vector_cached", mode.as_str());
        if wanted(&name) {
            cache_vectors(&engine, &query_texts)?;
            let samples = time_searches(&engine, &library, &query_texts, mode)?;
            results.insert(name, summary(samples));
        }
    }
    // Filters selecting 10 %, 6 % (two conditions) and 1 % of the chunks,
    // each query's a filter not seen before (a second value no document has
    // makes it new: evaluated filters are cached until the next write); and
    // one filter repeated, as a client scoped to one collection sends it.
    type FilterOf = fn(usize) -> serde_json::Value;
    let filters: [(&str, FilterOf); 4] = [
        (
            "search_hybrid_filtered_10pct",
            |i| json!({"group": [format!("g{}", i % 10), format!("none{i}")]}),
        ),
        (
            "search_hybrid_filtered",
            |i| json!({"group": ["g3", format!("none{i}")], "year": {"gte": 2010}}),
        ),
        (
            "search_hybrid_filtered_1pct",
            |i| json!({"bucket": [i % 100, -1 - i as i64]}),
        ),
        (
            "search_hybrid_filtered_10pct_repeated",
            |_| json!({"group": "g3"}),
        ),
    ];
    for (name, filter) in filters {
        for cached in [false, true] {
            let query_texts = texts(queries);
            let name = match cached {
                false => name.to_string(),
                true => format!("{name}_vector_cached"),
            };
            if !wanted(&name) {
                continue;
            }
            if cached {
                cache_vectors(&engine, &query_texts)?;
            }
            let mut filtered = Vec::with_capacity(queries);
            for (i, text) in query_texts.iter().enumerate() {
                let mut request = SearchRequest::new(library.clone(), text.clone());
                // The cached pass's filters are new too (evaluated
                // filters are cached).
                let n = if cached { i + queries } else { i };
                request.filter = Filter::from_json(&filter(n))?;
                let t = Instant::now();
                let response = engine.search(&request)?;
                filtered.push(t.elapsed().as_secs_f64() * 1e3);
                anyhow::ensure!(!response.hits.is_empty(), "{name}: no results");
            }
            results.insert(name, summary(filtered));
        }
    }
    let mut gets = Vec::with_capacity(queries);
    for _ in 0..queries {
        let d = rng.below(documents);
        let id = DocumentId::derive(&library, &source_of(d));
        let t = Instant::now();
        engine.document(id.as_str())?;
        gets.push(t.elapsed().as_secs_f64() * 1e3);
    }
    results.insert("get_document".into(), summary(gets));

    // Recall@10 of the vector index (graph search on quantised vectors,
    // rescored) against brute force over the f32 vectors, regenerated in
    // one pass for all queries.
    let store = engine.store();
    let recall_queries: Vec<Vec<f32>> = (0..100).map(|_| make_vector(&mut rng)).collect();
    let mut truth: Vec<Vec<(f32, usize)>> = vec![Vec::with_capacity(11); recall_queries.len()];
    for j in 0..chunks {
        let v = chunk_vector(j);
        for (q, best) in recall_queries.iter().zip(&mut truth) {
            let score = v.iter().zip(q).map(|(a, b)| a * b).sum::<f32>();
            if best.len() < 10 || score > best[best.len() - 1].0 {
                let at = best.partition_point(|(s, _)| *s >= score);
                best.insert(at, (score, j));
                best.truncate(10);
            }
        }
    }
    let chunk_id = |j: usize| {
        let document = DocumentId::derive(&library, &source_of(j / CHUNKS_PER_DOCUMENT));
        ChunkId::new(&document, (j % CHUNKS_PER_DOCUMENT) as u32)
    };
    // Two measures: the graph asked for exactly 10, and asked for the
    // candidates a search retrieves (the engine's fixed depth), of which
    // the best 10 are what the search returns.
    let (mut found, mut found_at_depth) = (0, 0);
    let mut graph_ms = Vec::new();
    for (q, best) in recall_queries.iter().zip(&truth) {
        let truth: Vec<ChunkId> = best.iter().map(|(_, j)| chunk_id(*j)).collect();
        let t = Instant::now();
        let graph = store.dense_graph(&library, q, 10)?;
        graph_ms.push(t.elapsed().as_secs_f64() * 1e3);
        found += graph.iter().filter(|h| truth.contains(&h.chunk)).count();
        let deep = store.dense_graph(&library, q, folio_engine::FUSION_DEPTH)?;
        found_at_depth += deep
            .iter()
            .take(10)
            .filter(|h| truth.contains(&h.chunk))
            .count();
    }
    let recall_queries = recall_queries.len();
    let stats = engine.inspect(&library)?;
    Ok(json!({
        "library": library.to_string(),
        "chunks": chunks,
        "documents": documents,
        "model": space.model,
        "backend": embedder.backend(),
        "built": existing != chunks,
        "build_seconds": build_seconds,
        "open_and_first_search_ms": first_search_ms,
        "warm_ms": warm_ms,
        "results": results,
        "hnsw_recall_at_10": found as f64 / (recall_queries * 10) as f64,
        "search_recall_at_10": found_at_depth as f64 / (recall_queries * 10) as f64,
        "hnsw_search": summary(graph_ms),
        "rss_mib": proc_status_kib("VmRSS:").map(|k| k as f64 / 1024.0),
        "peak_rss_mib": proc_status_kib("VmHWM:").map(|k| k as f64 / 1024.0),
        "disk_mib": engine.disk_bytes() as f64 / (1024.0 * 1024.0),
        "index": stats.index,
    }))
}

fn encoder(
    cli_args: &Global,
    overrides: &Overrides,
    corpus: &PathBuf,
    docs: usize,
    backends: &str,
) -> Result<serde_json::Value> {
    let file = crate::config::load_file(cli_args.config.as_deref())?;
    let mut forced = overrides.clone();
    forced.backend = Some("onnx".into());
    let config = crate::config::engine_config(file, &forced, None);
    let text =
        std::fs::read_to_string(corpus).with_context(|| format!("reading {}", corpus.display()))?;
    let texts: Vec<String> = text
        .lines()
        .take(docs)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l)?;
            Ok(format!(
                "{} {}",
                v["title"].as_str().unwrap_or(""),
                v["text"].as_str().unwrap_or("")
            )
            .trim()
            .to_string())
        })
        .collect::<Result<_>>()?;
    let threads = overrides.threads.unwrap_or(2);
    let mut report = serde_json::Map::new();
    report.insert("documents".into(), json!(texts.len()));
    report.insert("threads".into(), json!(threads));
    let mut vectors: Vec<Vec<Vec<f32>>> = Vec::new();
    let run = |name: &str,
               embed: &dyn Fn() -> Result<(Vec<Vec<f32>>, usize)>,
               report: &mut serde_json::Map<String, serde_json::Value>|
     -> Result<Vec<Vec<f32>>> {
        let t = Instant::now();
        let (v, tokens) = embed()?;
        let seconds = t.elapsed().as_secs_f64();
        report.insert(name.into(), json!({
            "seconds": seconds, "docs_per_s": texts.len() as f64 / seconds, "tokens": tokens, "tokens_per_s": tokens as f64 / seconds
        }));
        Ok(v)
    };
    let (model_dir, runtime, model) = match config {
        Ok(folio_engine::EngineConfig {
            embedder:
                EmbedderConfig::Onnx {
                    model_dir,
                    runtime,
                    model,
                    ..
                },
            ..
        }) => (model_dir, Some(runtime), model),
        Ok(folio_engine::EngineConfig {
            embedder: EmbedderConfig::Candle { model_dir, model },
            ..
        }) => (model_dir, None, model),
        Ok(_) => bail!("the encoder benchmark runs local models"),
        Err(e) if backends == "candle" => {
            tracing::info!(error = %e, "no ONNX Runtime; benchmarking candle only");
            (
                crate::config::folio_home().join("models/all-MiniLM-L6-v2"),
                None,
                ModelConfig::default(),
            )
        }
        Err(e) => return Err(e),
    };
    if backends == "onnx" || backends == "both" {
        let runtime = runtime.context("the onnx backend needs the ONNX Runtime library")?;
        let encoder = OnnxEncoder::load(&model_dir, &model, &runtime, threads)?;
        let warm: Vec<String> = texts.iter().take(16).cloned().collect();
        encoder.embed_cut_to_window(&warm)?;
        vectors.push(run(
            "onnxruntime",
            &|| Ok(encoder.embed_cut_to_window(&texts)?),
            &mut report,
        )?);
    }
    if backends == "candle" || backends == "both" {
        let encoder = CandleEncoder::load(&model_dir, &model)?;
        let warm: Vec<String> = texts.iter().take(16).cloned().collect();
        encoder.embed_cut_to_window(&warm)?;
        vectors.push(run(
            "candle",
            &|| Ok(encoder.embed_cut_to_window(&texts)?),
            &mut report,
        )?);
    }
    if vectors.len() == 2 {
        let min_cos = vectors[0]
            .iter()
            .zip(&vectors[1])
            .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>())
            .fold(1.0f32, f32::min);
        report.insert("min_cosine_onnx_vs_candle".into(), json!(min_cos));
    }
    Ok(serde_json::Value::Object(report))
}
