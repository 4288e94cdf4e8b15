fn main() {
    for t in std::env::args().skip(1) {
        let t = t.replace("\\n", "\n");
        println!(
            "{:?} detected={:?} de={:?}",
            t,
            folio_lexical::detected(&t),
            folio_lexical::analyze_in(&t, folio_lexical::Language::German)
        );
    }
}
