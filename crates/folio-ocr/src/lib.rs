//! OCR of scanned PDF pages through Tesseract. Two external programs do the
//! work: Poppler's `pdftoppm` rasterises one page to a grey-scale image and
//! `tesseract` reads it, answering in TSV (each word with its block,
//! paragraph and line, and a confidence), from which the page's paragraphs
//! are rebuilt. Both programs are found on `PATH` (Debian packages
//! `poppler-utils` and `tesseract-ocr`, plus one `tesseract-ocr-<lang>` per
//! language). Every run is bounded in time and in image size and works in a
//! scratch folder that is removed afterwards; a crash of either program on a
//! hostile file is a failed page, never a failed process.

mod languages;
mod pages;
mod tsv;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub use languages::tesseract_code;
pub use pages::{MAX_PAGE_SIDE, PageImage, Poppler};

/// Why OCR could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OcrError {
    #[error("OCR is unavailable: {0}")]
    Unavailable(String),
    #[error("OCR scratch space: {0}")]
    Scratch(String),
}

/// How pages are read.
#[derive(Debug, Clone)]
pub struct OcrOptions {
    /// Rasterisation resolution in dots per inch.
    pub dpi: u32,
    /// Time allowed to each program on one page.
    pub page_timeout: Duration,
    /// Pages read at once (tesseract then runs single-threaded).
    pub workers: usize,
}

impl Default for OcrOptions {
    fn default() -> Self {
        OcrOptions {
            dpi: 300,
            page_timeout: Duration::from_secs(120),
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// One page's recognised text.
#[derive(Debug, Clone, PartialEq)]
pub struct PageText {
    pub page: u32,
    /// Paragraphs in reading order, lines joined (end-of-line hyphens of a
    /// word broken across lines removed).
    pub paragraphs: Vec<String>,
    /// Mean word confidence in 0–100, when any word was read.
    pub confidence: Option<f32>,
}

/// The outcome for one page: its text, or why it could not be read.
pub type PageResult = (u32, Result<PageText, String>);

/// The languages chosen for a document, and what was set aside on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageChoice {
    /// Tesseract language codes, joined with `+` on its command line.
    pub codes: Vec<String>,
    pub warnings: Vec<String>,
}

/// The installed OCR programs and languages.
#[derive(Debug, Clone)]
pub struct Tesseract {
    tesseract: PathBuf,
    pdftoppm: PathBuf,
    version: String,
    languages: BTreeSet<String>,
}

/// The largest raster, in pixels per side: a page bigger than this at the
/// chosen resolution is cropped rather than allocated whole.
const MAX_SIDE: u32 = 8_000;
/// The most TSV one page may produce.
const MAX_OUTPUT: u64 = 32 * 1024 * 1024;
/// Pseudo-languages tesseract lists that read no text.
const NOT_LANGUAGES: [&str; 2] = ["osd", "equ"];

impl Tesseract {
    /// Finds `tesseract` and `pdftoppm` on `PATH` and asks tesseract for its
    /// version and installed languages.
    pub fn detect() -> Result<Self, OcrError> {
        let (tesseract, pdftoppm) = match (find("tesseract"), find("pdftoppm")) {
            (Some(t), Some(p)) => (t, p),
            (t, p) => {
                let missing: Vec<&str> = [
                    t.is_none()
                        .then_some("tesseract (Debian package tesseract-ocr)"),
                    p.is_none()
                        .then_some("pdftoppm (Debian package poppler-utils)"),
                ]
                .into_iter()
                .flatten()
                .collect();
                return Err(OcrError::Unavailable(format!(
                    "{} not found on PATH",
                    missing.join(" and ")
                )));
            }
        };
        let timeout = Duration::from_secs(30);
        let unavailable = |e: String| OcrError::Unavailable(format!("tesseract: {e}"));
        let version = run(
            Command::new(&tesseract).arg("--version"),
            timeout,
            MAX_OUTPUT,
        )
        .map_err(unavailable)?;
        let version = String::from_utf8_lossy(&version)
            .lines()
            .next()
            .unwrap_or("tesseract")
            .trim()
            .to_string();
        let listed = run(
            Command::new(&tesseract).arg("--list-langs"),
            timeout,
            MAX_OUTPUT,
        )
        .map_err(unavailable)?;
        let languages: BTreeSet<String> = String::from_utf8_lossy(&listed)
            .lines()
            .skip(1)
            .map(str::trim)
            .filter(|l| !l.is_empty() && !NOT_LANGUAGES.contains(l))
            .map(str::to_string)
            .collect();
        if languages.is_empty() {
            return Err(OcrError::Unavailable(
                "tesseract has no language data (Debian package tesseract-ocr-eng)".into(),
            ));
        }
        Ok(Tesseract {
            tesseract,
            pdftoppm,
            version,
            languages,
        })
    }

    /// "tesseract 5.3.0".
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Installed language codes (`eng`, `deu`, ...).
    pub fn languages(&self) -> &BTreeSet<String> {
        &self.languages
    }

    /// The languages to read with: the installed ones of the first list of
    /// `preferences` that has any (entries are ISO 639-1 or -2 codes, BCP 47
    /// tags or English or native names, as a Zotero item's language field
    /// holds them; `;`, `,` or `/` separate several), else English or the
    /// first installed language. Each wish set aside is explained.
    pub fn choose(&self, preferences: &[&[String]]) -> LanguageChoice {
        let mut warnings = Vec::new();
        let mut codes = Vec::new();
        for wanted in preferences {
            codes = self.usable(wanted, &mut warnings);
            if !codes.is_empty() {
                break;
            }
        }
        if codes.is_empty() {
            let any = if self.languages.contains("eng") {
                "eng".to_string()
            } else {
                self.languages.iter().next().cloned().unwrap_or_default()
            };
            warnings.push(format!("reading with {any}"));
            codes.push(any);
        }
        LanguageChoice { codes, warnings }
    }

    fn usable(&self, wanted: &[String], warnings: &mut Vec<String>) -> Vec<String> {
        let mut codes: Vec<String> = Vec::new();
        for wish in wanted.iter().flat_map(|w| languages::split(w)) {
            let code = if self.languages.contains(wish) {
                Some(wish.to_string())
            } else {
                tesseract_code(wish).map(str::to_string)
            };
            match code {
                Some(code) if self.languages.contains(&code) => {
                    if !codes.contains(&code) {
                        codes.push(code);
                    }
                }
                Some(code) => warnings.push(format!(
                    "OCR language {wish:?} ({code}) is not installed \
                     (Debian package tesseract-ocr-{})",
                    code.replace('_', "-")
                )),
                None => warnings.push(format!("unknown OCR language {wish:?}")),
            }
        }
        codes
    }

    /// Reads `pages` (1-based) of the PDF `pdf` in the given languages,
    /// working in a fresh folder under `scratch`. Each page succeeds or fails
    /// on its own; results come back in page order. `stop` is asked before
    /// each page: once it says true, the pages not yet started are left out.
    pub fn read_pdf(
        &self,
        pdf: &[u8],
        pages: &[u32],
        languages: &[String],
        scratch: &Path,
        options: &OcrOptions,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<Vec<PageResult>, OcrError> {
        let (dir, input) = scratch_copy(scratch, "input.pdf", pdf)?;
        let languages = languages.join("+");
        let next = AtomicUsize::new(0);
        let results = Mutex::new(Vec::with_capacity(pages.len()));
        let workers = options.workers.clamp(1, pages.len().max(1));
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    while !stop()
                        && let Some(&page) = pages.get(next.fetch_add(1, Ordering::Relaxed))
                    {
                        let read = self.read_page(&input, page, &languages, dir.path(), options);
                        results
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push((page, read));
                    }
                });
            }
        });
        let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
        results.sort_by_key(|(page, _)| *page);
        Ok(results)
    }

    fn read_page(
        &self,
        input: &Path,
        page: u32,
        languages: &str,
        dir: &Path,
        options: &OcrOptions,
    ) -> Result<PageText, String> {
        let stem = dir.join(format!("page-{page}"));
        let image = stem.with_extension("pgm");
        let number = page.to_string();
        let side = MAX_SIDE.to_string();
        run(
            Command::new(&self.pdftoppm)
                .args(["-f", &number, "-l", &number])
                .args(["-r", &options.dpi.to_string()])
                .args(["-x", "0", "-y", "0", "-W", &side, "-H", &side])
                .args(["-gray", "-singlefile", "-q"])
                .arg(input)
                .arg(&stem),
            options.page_timeout,
            MAX_OUTPUT,
        )
        .map_err(|e| format!("pdftoppm: {e}"))?;
        let read = self.tesseract_tsv(&image, languages, Some(options.dpi), options.page_timeout);
        let _ = std::fs::remove_file(&image);
        let mut text = read?.into_iter().next().unwrap_or(PageText {
            page,
            paragraphs: Vec::new(),
            confidence: None,
        });
        text.page = page;
        Ok(text)
    }

    /// Runs tesseract on an image file: its pages, by the TSV's page numbers.
    fn tesseract_tsv(
        &self,
        image: &Path,
        languages: &str,
        dpi: Option<u32>,
        timeout: Duration,
    ) -> Result<Vec<PageText>, String> {
        let mut command = Command::new(&self.tesseract);
        command.arg(image).arg("stdout").args(["-l", languages]);
        if let Some(dpi) = dpi {
            command.args(["--dpi", &dpi.to_string()]);
        }
        command.arg("tsv").env("OMP_THREAD_LIMIT", "1");
        let tsv = run(&mut command, timeout, MAX_OUTPUT).map_err(|e| format!("tesseract: {e}"))?;
        Ok(tsv::pages(&String::from_utf8_lossy(&tsv)))
    }

    /// Reads an image file (PNG, JPEG, or a TIFF of `pages` pages) in the
    /// given languages, working in a fresh folder under `scratch`: one
    /// tesseract run, given `pages` times the page timeout. Its failure is
    /// page 1's.
    pub fn read_image(
        &self,
        image: &[u8],
        pages: u32,
        languages: &[String],
        scratch: &Path,
        options: &OcrOptions,
    ) -> Result<Vec<PageResult>, OcrError> {
        let (_dir, input) = scratch_copy(scratch, "image", image)?;
        let timeout = options.page_timeout * pages.max(1);
        Ok(
            match self.tesseract_tsv(&input, &languages.join("+"), None, timeout) {
                Ok(read) => read.into_iter().map(|p| (p.page, Ok(p))).collect(),
                Err(e) => vec![(1, Err(e))],
            },
        )
    }
}

/// A fresh folder under `scratch` (removed when dropped) holding `bytes` as
/// the file `name`.
fn scratch_copy(
    scratch: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<(tempfile::TempDir, PathBuf), OcrError> {
    let scratch_error = |e: std::io::Error| OcrError::Scratch(e.to_string());
    std::fs::create_dir_all(scratch).map_err(scratch_error)?;
    let dir = tempfile::Builder::new()
        .prefix("ocr-")
        .tempdir_in(scratch)
        .map_err(scratch_error)?;
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).map_err(scratch_error)?;
    Ok((dir, path))
}

/// The executable `name` in a folder of `PATH`.
fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs a program with no input, capturing at most `max_output` bytes of its
/// standard output; killed when it outlives `timeout`. A non-zero exit is an
/// error carrying the last line of its standard error.
fn run(command: &mut Command, timeout: Duration, max_output: u64) -> Result<Vec<u8>, String> {
    let program = command
        .get_program()
        .to_os_string()
        .to_string_lossy()
        .into_owned();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let collect = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(pipe) = pipe {
                let mut limited = pipe.take(max_output);
                let _ = limited.read_to_end(&mut bytes);
                // Drain the rest so the child never blocks on a full pipe.
                let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
            }
            bytes
        })
    };
    let out = collect(stdout.map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = collect(stderr.map(|p| Box::new(p) as Box<dyn Read + Send>));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("took longer than {timeout:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(e.to_string()),
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    if status.success() {
        Ok(out)
    } else {
        let message = String::from_utf8_lossy(&err);
        let last = message.lines().rev().find(|l| !l.trim().is_empty());
        Err(match last {
            Some(line) => format!("{status}: {}", line.trim()),
            None => status.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_overruns_is_killed() {
        let started = Instant::now();
        let result = run(
            Command::new("sleep").arg("30"),
            Duration::from_millis(200),
            MAX_OUTPUT,
        );
        assert_eq!(result, Err("took longer than 200ms".to_string()));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_failure_carries_the_last_line_of_stderr_and_output_is_capped() {
        let failed = run(
            Command::new("sh").args(["-c", "echo first >&2; echo boom >&2; exit 3"]),
            Duration::from_secs(10),
            MAX_OUTPUT,
        );
        let message = failed.unwrap_err();
        assert!(
            message.ends_with(": boom") && message.contains('3'),
            "{message}"
        );
        let capped = run(
            Command::new("sh").args(["-c", "head -c 100000 /dev/zero"]),
            Duration::from_secs(10),
            1000,
        );
        assert_eq!(capped.map(|out| out.len()), Ok(1000));
        let missing = run(
            &mut Command::new("/nonexistent/tesseract"),
            Duration::from_secs(1),
            MAX_OUTPUT,
        );
        assert!(missing.unwrap_err().starts_with("cannot start"));
    }
}
