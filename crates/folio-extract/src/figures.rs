//! Figures gathered for OCR within one document's caps: at most
//! `max_ocr_pages` images and `MAX_FIGURE_BYTES` in all. A figure past a
//! cap is listed without its image, so the caller can say it was left
//! unread; the caller asks for no images at all with `max_ocr_pages = 0`
//! (OCR off, or no OCR engine), and then only counts them. An image seen
//! before in the document (a logo on every page, one image drawn many
//! times) is read once.

use folio_core::{Figure, Limits};

/// The bytes of the images one document hands over for OCR.
pub const MAX_FIGURE_BYTES: usize = 64 << 20;

/// Raster image extensions, for a figure counted without reading it.
const RASTER: [&str; 5] = [".png", ".jpg", ".jpeg", ".tif", ".tiff"];

/// Whether a member's name says it is a raster image.
pub(crate) fn is_raster_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    RASTER.iter().any(|ext| name.ends_with(ext))
}

pub(crate) struct Figures {
    list: Vec<Figure>,
    seen: std::collections::HashSet<u64>,
    read: usize,
    bytes: usize,
    max: usize,
}

impl Figures {
    pub(crate) fn new(limits: &Limits) -> Self {
        Figures {
            list: Vec::new(),
            seen: Default::default(),
            read: 0,
            bytes: 0,
            max: limits.max_ocr_pages as usize,
        }
    }

    /// Whether another image would be taken: reading one past this is
    /// wasted work.
    pub(crate) fn wants_image(&self) -> bool {
        self.read < self.max && self.bytes < MAX_FIGURE_BYTES
    }

    /// A figure at `at` blocks on `page`, with its image when one was read
    /// and the caps have room for it.
    pub(crate) fn push(&mut self, image: Option<Vec<u8>>, at: usize, page: Option<u32>) {
        if let Some(image) = &image {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            image.hash(&mut hasher);
            if !self.seen.insert(hasher.finish()) {
                return;
            }
        }
        let image = image
            .filter(|i| self.wants_image() && self.bytes + i.len() <= MAX_FIGURE_BYTES)
            .unwrap_or_default();
        if !image.is_empty() {
            self.read += 1;
            self.bytes += image.len();
        }
        self.list.push(Figure { image, at, page });
    }

    pub(crate) fn into_vec(self) -> Vec<Figure> {
        self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_a_cap_a_figure_is_counted_without_its_image() {
        let limits = Limits {
            max_ocr_pages: 2,
            ..Limits::default()
        };
        let mut figures = Figures::new(&limits);
        for at in 0..3 {
            assert_eq!(figures.wants_image(), at < 2);
            figures.push(Some(vec![1, 2, at as u8]), at, None);
        }
        let sizes: Vec<usize> = figures.into_vec().iter().map(|f| f.image.len()).collect();
        assert_eq!(sizes, [3, 3, 0]);

        let mut none = Figures::new(&Limits {
            max_ocr_pages: 0,
            ..Limits::default()
        });
        assert!(!none.wants_image());
        none.push(None, 0, Some(1));
        assert_eq!(none.into_vec().len(), 1);
    }

    #[test]
    fn the_byte_cap_holds_across_figures() {
        let mut figures = Figures::new(&Limits::default());
        figures.push(Some(vec![0; MAX_FIGURE_BYTES - 10]), 0, None);
        figures.push(Some(vec![1; 11]), 1, None);
        figures.push(Some(vec![2; 10]), 2, None);
        let sizes: Vec<usize> = figures.into_vec().iter().map(|f| f.image.len()).collect();
        assert_eq!(sizes, [MAX_FIGURE_BYTES - 10, 0, 10]);
    }

    #[test]
    fn an_image_seen_before_is_read_once() {
        let mut figures = Figures::new(&Limits::default());
        for at in 0..3 {
            figures.push(Some(b"logo".to_vec()), at, Some(at as u32 + 1));
        }
        figures.push(Some(b"chart".to_vec()), 3, Some(3));
        let kept: Vec<usize> = figures.into_vec().iter().map(|f| f.at).collect();
        assert_eq!(kept, [0, 3]);
    }

    #[test]
    fn raster_names() {
        assert!(is_raster_name("word/media/image1.PNG"));
        assert!(is_raster_name("Pictures/a.jpeg"));
        assert!(!is_raster_name("word/media/image2.emf"));
        assert!(!is_raster_name("ppt/media/chart.svg"));
    }
}
