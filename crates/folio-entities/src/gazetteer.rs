//! Declared entities found exactly: every name and alias, folded, in one
//! Aho-Corasick automaton run over the folded text. A match counts only at
//! word boundaries ("Acme" is not in "Acmegrid"); where matches overlap the
//! leftmost, then the longest, wins ("Acme Bank" over "Acme").

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, MatchKind};

use crate::fold::{fold, fold_name};

/// An entity a user declares (a row of `folio entities import`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Declared {
    pub name: String,
    /// person, organization, product, place, other, or the user's own.
    pub kind: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    /// What the user says about it (country, tier, an id of theirs).
    #[serde(default)]
    pub attributes: std::collections::BTreeMap<String, serde_json::Value>,
    /// What the user says it is to other entities ("member of" a party,
    /// "subsidiary of" a group).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relations: Vec<Relation>,
}

/// A declared relation of an entity to another, named by its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Relation {
    #[serde(rename = "type")]
    pub relation: String,
    pub target: String,
}

/// Why a declared entity cannot be used: which one (its position in the
/// list), which field, and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("entity {index} ({name:?}): {field}: {reason}")]
pub struct DeclaredError {
    pub index: usize,
    pub name: String,
    pub field: &'static str,
    pub reason: String,
    /// The entity that already has the name, when that is the reason.
    pub other: Option<usize>,
}

/// A declared entity found in a text: which (its index in the declared
/// list) and where (byte offsets into the text searched).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mention {
    pub entity: usize,
    pub start: usize,
    pub end: usize,
}

/// The declared names and aliases of a library, ready to search texts.
#[derive(Debug, Clone)]
pub struct Gazetteer {
    automaton: Option<AhoCorasick>,
    /// For each pattern of the automaton, its entity.
    entity_of: Vec<usize>,
}

impl Gazetteer {
    /// A gazetteer of `entities`, or every reason some cannot be used (an
    /// empty name or type, an alias that folds to nothing, a name or alias
    /// that folds to the same text as another entity's): nothing is taken
    /// from a list with errors.
    pub fn new(entities: &[Declared]) -> Result<Self, Vec<DeclaredError>> {
        let mut errors = Vec::new();
        let mut owner: HashMap<String, usize> = HashMap::new();
        let mut patterns = Vec::new();
        let mut entity_of = Vec::new();
        for (index, entity) in entities.iter().enumerate() {
            let error = |field, reason: String| DeclaredError {
                index,
                name: entity.name.clone(),
                field,
                reason,
                other: None,
            };
            if entity.kind.trim().is_empty() {
                errors.push(error("type", "empty".into()));
            }
            let names = std::iter::once(("name", &entity.name))
                .chain(entity.aliases.iter().map(|a| ("aliases", a)));
            for (field, name) in names {
                let folded = fold_name(name);
                if folded.is_empty() {
                    errors.push(error(field, format!("{name:?} has no letters or digits")));
                    continue;
                }
                match owner.get(&folded) {
                    Some(&other) if other == index => {}
                    Some(&other) => errors.push(DeclaredError {
                        other: Some(other),
                        ..error(
                            field,
                            format!(
                                "{name:?} is also a name of entity {other} ({:?})",
                                entities[other].name
                            ),
                        )
                    }),
                    None => {
                        owner.insert(folded.clone(), index);
                        patterns.push(folded);
                        entity_of.push(index);
                    }
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let automaton = if patterns.is_empty() {
            None
        } else {
            // Standard semantics: every match, overlapping ones included, so
            // a longer pattern cut short by a word boundary cannot hide a
            // shorter one that holds.
            let built = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns);
            match built {
                Ok(automaton) => Some(automaton),
                Err(e) => {
                    return Err(vec![DeclaredError {
                        index: 0,
                        name: String::new(),
                        field: "name",
                        reason: format!("the names cannot be searched: {e}"),
                        other: None,
                    }]);
                }
            }
        };
        Ok(Gazetteer {
            automaton,
            entity_of,
        })
    }

    /// The declared entities mentioned in `text`, in order, at most `cap`
    /// (the second value says whether more were left out).
    pub fn find(&self, text: &str, cap: usize) -> (Vec<Mention>, bool) {
        let Some(automaton) = &self.automaton else {
            return (Vec::new(), false);
        };
        let folded = fold(text);
        let bytes = folded.text.as_bytes();
        let mut found: Vec<(usize, usize, usize)> = automaton
            .find_overlapping_iter(&folded.text)
            .filter(|m| {
                (m.start() == 0 || bytes[m.start() - 1] == b' ')
                    && (m.end() == bytes.len() || bytes[m.end()] == b' ')
            })
            .map(|m| (m.start(), m.end(), self.entity_of[m.pattern().as_usize()]))
            .collect();
        // Leftmost first, then longest; then keep what does not overlap.
        found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut mentions = Vec::new();
        let mut reached = 0;
        let mut more = false;
        for (start, end, entity) in found {
            if start < reached {
                continue;
            }
            if mentions.len() == cap {
                more = true;
                break;
            }
            reached = end;
            let (start, end) = folded.source(start, end);
            mentions.push(Mention { entity, start, end });
        }
        (mentions, more)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(name: &str, kind: &str, aliases: &[&str]) -> Declared {
        Declared {
            name: name.into(),
            kind: kind.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            attributes: Default::default(),
            relations: Vec::new(),
        }
    }

    fn surfaces(g: &Gazetteer, text: &str) -> Vec<(usize, String)> {
        g.find(text, 100)
            .0
            .iter()
            .map(|m| (m.entity, text[m.start..m.end].to_string()))
            .collect()
    }

    #[test]
    fn names_and_aliases_match_folded_at_word_boundaries() {
        let g = Gazetteer::new(&[
            declared("Acme", "organization", &["Acme Corp.", "ACME Corporation"]),
            declared("Acme Bank", "organization", &[]),
            declared("Globex", "organization", &["Globex Inc"]),
        ])
        .unwrap();
        assert_eq!(
            surfaces(
                &g,
                "ACME CORP signed; acme corporation paid. Acmegrid did not."
            ),
            vec![(0, "ACME CORP".into()), (0, "acme corporation".into())]
        );
        // The longest wins where names overlap, and a longer name cut by a
        // boundary leaves the shorter one.
        assert_eq!(
            surfaces(&g, "Acme Bank lent to Acme Cola and Globex, Inc."),
            vec![
                (1, "Acme Bank".into()),
                (0, "Acme".into()),
                (2, "Globex, Inc".into())
            ]
        );
        assert!(surfaces(&g, "No one here.").is_empty());
    }

    #[test]
    fn a_cap_bounds_the_mentions_of_a_text() {
        let g = Gazetteer::new(&[declared("Acme", "organization", &[])]).unwrap();
        let text = "Acme ".repeat(50);
        let (mentions, more) = g.find(&text, 10);
        assert_eq!(mentions.len(), 10);
        assert!(more);
        let (mentions, more) = g.find(&text, 50);
        assert_eq!((mentions.len(), more), (50, false));
    }

    #[test]
    fn a_bad_list_is_refused_whole_with_every_reason() {
        let errors = Gazetteer::new(&[
            declared("Acme", "organization", &["A.C.M.E."]),
            declared("acme", "organization", &[]),
            declared("...", "person", &[]),
            declared("Initech", " ", &["Initech", "--"]),
        ])
        .unwrap_err();
        let said: Vec<(usize, &str)> = errors.iter().map(|e| (e.index, e.field)).collect();
        assert_eq!(
            said,
            vec![(1, "name"), (2, "name"), (3, "type"), (3, "aliases")]
        );
        assert!(errors[0].reason.contains("entity 0"), "{}", errors[0]);
    }

    /// A generated test of alias linking: every declared name or alias
    /// written into sentences among distractors that share words with them
    /// (a longer company, a name glued to a suffix, a word of the name
    /// alone) is linked to its entity; nothing else is.
    #[test]
    fn declared_aliases_link_with_precision_and_recall_of_one() {
        let stems = [
            "Acme",
            "Globex",
            "Initech",
            "Umbrella",
            "Hooli",
            "Vehement",
            "Soylent",
            "Tyrell",
            "Wonka",
            "Cyberdyne",
            "Stark",
            "Wayne",
            "Oscorp",
            "Aperture",
            "Nakatomi",
            "Gringotts",
        ];
        let mut entities = Vec::new();
        for (i, stem) in stems.iter().enumerate() {
            entities.push(declared(
                &format!("{stem} Holdings"),
                "organization",
                &[
                    &format!("{stem} Corp."),
                    &format!("{} GROUP", stem.to_uppercase()),
                ],
            ));
            assert_eq!(entities.len(), i + 1);
        }
        let g = Gazetteer::new(&entities).unwrap();
        let (mut true_positive, mut false_positive, mut missed) = (0, 0, 0);
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..2_000 {
            let e = next(stems.len());
            let stem = stems[e];
            let surface = match next(3) {
                0 => format!("{stem} Holdings"),
                1 => format!("{} corp", stem.to_lowercase()),
                _ => format!("{stem} Group"),
            };
            let other = stems[next(stems.len())];
            let distractor = match next(4) {
                0 => format!("{other}ville Holdings"),
                1 => format!("{other} Holdingsworth"),
                2 => format!("the {other} brand"),
                _ => format!("{other}-Corpus"),
            };
            let text = format!("In May, {surface} bought part of {distractor} for cash.");
            let found = g.find(&text, 10).0;
            let expected = text.find(&surface).unwrap();
            for m in &found {
                if m.entity == e && m.start == expected && m.end == expected + surface.len() {
                    true_positive += 1;
                } else {
                    false_positive += 1;
                }
            }
            if !found.iter().any(|m| m.entity == e && m.start == expected) {
                missed += 1;
            }
        }
        let precision = true_positive as f64 / (true_positive + false_positive) as f64;
        assert!(precision >= 0.99, "precision {precision}");
        assert_eq!(missed, 0);
    }
}
