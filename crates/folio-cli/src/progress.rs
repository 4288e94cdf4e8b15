//! Progress bars on stderr (indicatif), hidden when stderr is not a terminal
//! or output is JSON.

use std::io::IsTerminal;

use folio_engine::{IngestItem, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Bar {
    bar: ProgressBar,
    /// Print each settled ingest item's line on stdout as it comes.
    items: bool,
}

impl Bar {
    pub fn new(label: &str, visible: bool) -> Self {
        let bar = ProgressBar::hidden();
        if visible && std::io::stderr().is_terminal() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        let style = ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {wide_msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(label.to_string());
        Bar { bar, items: false }
    }

    /// A bar that also prints each ingested document's line as it settles
    /// (the text output of `folio ingest`), so no list of them is kept.
    pub fn printing_items(mut self) -> Self {
        self.items = true;
        self
    }
}

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.bar.set_length(total);
    }

    fn advance(&self, done: u64, message: &str) {
        self.bar.inc(done);
        if !message.is_empty() {
            self.bar
                .set_message(message.rsplit('/').next().unwrap_or(message).to_string());
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn item(&self, item: &IngestItem) {
        if self.items {
            // A closed stdout (a pipe to `head`) ends the printing, not
            // the ingest.
            let _ = self.bar.suspend(|| crate::output::ingest_item(item));
        }
    }
}
