//! Facet aggregation shared by the backends: a backend reads the filtered
//! documents' fields (metadata merged with the addressed document columns)
//! and hands each to an `Aggregator`, which groups them in memory. Values are
//! compared as SQL sees JSON scalars (booleans as integers, numbers before
//! text), so every backend groups and orders alike.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::{FacetGroup, FacetRequest, Facets, FieldStats};

/// A value as SQL sees a JSON field (json_extract / json_each): booleans are
/// integers, lists and objects their JSON text, null nothing.
fn sql_scalar(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::Bool(b) => Some(Value::from(i64::from(*b))),
        Value::Number(_) | Value::String(_) => Some(value.clone()),
        other => Some(Value::String(other.to_string())),
    }
}

/// SQLite's order of scalars: numbers (by value) before text (by bytes).
fn sql_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.as_str().cmp(&b.as_str()),
    }
}

/// The group values of a field: a list fans out to its items, a scalar is
/// itself (null included); a field the record lacks gives none, which
/// leaves the record out of the groups.
fn members(value: Option<&Value>) -> Vec<Value> {
    match value {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| sql_scalar(v).unwrap_or(Value::Null))
            .collect(),
        Some(v) => vec![sql_scalar(v).unwrap_or(Value::Null)],
    }
}

#[derive(Default)]
struct StatAccumulator {
    min: Option<Value>,
    max: Option<Value>,
    sum: Option<f64>,
    count: u64,
}

impl StatAccumulator {
    fn add(&mut self, value: &Value) {
        self.count += 1;
        if let Some(n) = value.as_f64() {
            *self.sum.get_or_insert(0.0) += n;
        }
        if self
            .min
            .as_ref()
            .is_none_or(|m| sql_order(value, m).is_lt())
        {
            self.min = Some(value.clone());
        }
        if self
            .max
            .as_ref()
            .is_none_or(|m| sql_order(value, m).is_gt())
        {
            self.max = Some(value.clone());
        }
    }

    fn finish(self) -> FieldStats {
        FieldStats {
            min: self.min.unwrap_or(Value::Null),
            max: self.max.unwrap_or(Value::Null),
            sum: self.sum,
            count: self.count,
        }
    }
}

struct GroupAccumulator {
    key: Vec<Value>,
    count: u64,
    stats: Vec<StatAccumulator>,
    top: HashMap<String, u64>,
}

/// Every combination of one value per group field (a list fans out).
fn key_combinations(fields: &Map<String, Value>, group_by: &[String]) -> Vec<Vec<Value>> {
    let mut keys: Vec<Vec<Value>> = vec![Vec::new()];
    for field in group_by {
        let values = members(fields.get(field));
        keys = keys
            .iter()
            .flat_map(|key| {
                values.iter().map(move |v| {
                    let mut longer = key.clone();
                    longer.push(v.clone());
                    longer
                })
            })
            .collect();
    }
    keys
}

/// Groups documents for one `FacetRequest`.
pub struct Aggregator<'a> {
    request: &'a FacetRequest,
    groups: HashMap<String, GroupAccumulator>,
    documents: u64,
}

impl<'a> Aggregator<'a> {
    pub fn new(request: &'a FacetRequest) -> Self {
        let mut aggregator = Aggregator {
            request,
            groups: HashMap::new(),
            documents: 0,
        };
        if request.group_by.is_empty() {
            let group = aggregator.new_group(Vec::new());
            aggregator.groups.insert(String::new(), group);
        }
        aggregator
    }

    /// The fields a backend must supply for each document.
    pub fn fields(&self) -> Vec<&'a String> {
        let request = self.request;
        let mut fields: Vec<&String> = Vec::new();
        let top = request.top_values.as_ref().map(|(field, _)| field);
        for field in request.group_by.iter().chain(&request.stats).chain(top) {
            if !fields.contains(&field) {
                fields.push(field);
            }
        }
        fields
    }

    fn new_group(&self, key: Vec<Value>) -> GroupAccumulator {
        GroupAccumulator {
            key,
            count: 0,
            stats: self
                .request
                .stats
                .iter()
                .map(|_| StatAccumulator::default())
                .collect(),
            top: HashMap::new(),
        }
    }

    /// Counts one document that passed the filter.
    pub fn add(&mut self, fields: &Map<String, Value>) {
        let request = self.request;
        self.documents += 1;
        let values: Vec<Option<Value>> = request
            .stats
            .iter()
            .map(|f| fields.get(f).and_then(sql_scalar))
            .collect();
        let mut tags: Vec<String> = request
            .top_values
            .as_ref()
            .map(|(f, _)| members(fields.get(f)))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect();
        tags.sort_unstable();
        tags.dedup();
        let mut seen = HashSet::new();
        for key in key_combinations(fields, &request.group_by) {
            let order = key_order(&key);
            if !seen.insert(order.clone()) {
                continue;
            }
            if !self.groups.contains_key(&order) {
                let group = self.new_group(key);
                self.groups.insert(order.clone(), group);
            }
            let Some(group) = self.groups.get_mut(&order) else {
                continue;
            };
            group.count += 1;
            for (stat, value) in group.stats.iter_mut().zip(&values) {
                if let Some(value) = value {
                    stat.add(value);
                }
            }
            for tag in &tags {
                *group.top.entry(tag.clone()).or_default() += 1;
            }
        }
    }

    /// The groups, largest first (ties by key), cut to the request's limit.
    pub fn finish(self) -> Facets {
        let request = self.request;
        let mut groups: Vec<(String, GroupAccumulator)> = self
            .groups
            .into_iter()
            .filter(|(_, g)| g.count >= request.min_count.max(1) || request.group_by.is_empty())
            .collect();
        let total_groups = groups.len() as u64;
        groups.sort_by(|(a_order, a), (b_order, b)| {
            b.count.cmp(&a.count).then_with(|| a_order.cmp(b_order))
        });
        groups.truncate(request.limit);
        let top_n = request.top_values.as_ref().map_or(0, |(_, n)| *n);
        let groups = groups
            .into_iter()
            .map(|(_, g)| {
                let mut top: Vec<(String, u64)> = g.top.into_iter().collect();
                top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                top.truncate(top_n);
                FacetGroup {
                    key: g.key,
                    count: g.count,
                    stats: request
                        .stats
                        .iter()
                        .cloned()
                        .zip(g.stats.into_iter().map(StatAccumulator::finish))
                        .collect(),
                    top_values: top,
                }
            })
            .collect();
        Facets {
            groups,
            total_groups,
            documents: self.documents,
        }
    }
}

fn key_order(key: &[Value]) -> String {
    key.iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\u{1}")
}
