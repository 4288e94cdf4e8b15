//! Makes `german-compounds.fst`, the n-gram probabilities German compounds
//! are split by (`folio-lexical` bundles it at build time), from the three
//! maps of charsplit-fst 0.1.4 (MIT OR Apache-2.0; CharSplit's
//! probabilities, by Don Tuggener, MIT: Tuggener, D. (2016), *Incremental
//! Coreference Resolution for German*, University of Zurich):
//! `scripts/german_compounds.sh` fetches them and runs this.
//!
//!     cargo run --release -p folio-compounds-data -- DATA_DIR OUT
//!
//! One map of keys `i`, `p` or `s` (infix, prefix, suffix) followed by the
//! n-gram, each with its probability in hundredths: half the size of the
//! three, and the same split, at the analyser's threshold, for 99.7 % of
//! 48,178 German words of manual pages and package descriptions.

use std::path::Path;

use tantivy_fst::{Map, MapBuilder, Streamer};

/// A map of charsplit-fst's, read by this crate's FST reader: its format
/// 3 is format 2 with a checksum after it.
fn read(path: &Path) -> Map<Vec<u8>> {
    let mut bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(bytes.len() > 36, "{}: not a map", path.display());
    let version = u64::from_le_bytes(bytes[..8].try_into().unwrap());
    if version == 3 {
        bytes.truncate(bytes.len() - 4);
        bytes[..8].copy_from_slice(&2u64.to_le_bytes());
    }
    Map::from_bytes(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [data, out] = args.as_slice() else {
        eprintln!("usage: compounds_data DATA_DIR OUT");
        std::process::exit(2);
    };
    let mut builder = MapBuilder::memory();
    let mut key = Vec::new();
    for (tag, name) in [(b'i', "infix"), (b'p', "prefix"), (b's', "suffix")] {
        let map = read(&Path::new(data).join(format!("{name}.fst")));
        let mut stream = map.stream();
        while let Some((ngram, bits)) = stream.next() {
            let probability = f64::from_bits(bits);
            assert!((0.0..=1.0).contains(&probability), "{name} {probability}");
            key.clear();
            key.push(tag);
            key.extend_from_slice(ngram);
            builder
                .insert(&key, (probability * 100.0).round() as u64)
                .expect("keys in order");
        }
    }
    let bytes = builder.into_inner().expect("the map is written");
    std::fs::write(out, &bytes).unwrap_or_else(|e| panic!("{out}: {e}"));
    eprintln!("{out}: {} bytes", bytes.len());
}
