//! Record queries over the documents table: facets (groups with counts,
//! statistics and top tag values, aggregated in one pass over the filtered
//! records), neighbours in a field's order, document lookups by filter.
//! Field names reach SQL only as bound JSON paths.

use std::collections::HashMap;

use folio_core::{Condition, DocumentId, DocumentSummary, Filter, NeighbourOrder};
use folio_store::{FacetGroup, FacetRequest, Facets, FieldStats, Result, StoreError};
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params_from_iter};
use serde_json::{Map, Value};

use crate::filter_sql::{self, column, json_path};
use crate::rows::{DOCUMENT_COLUMNS, summary_from_row};
use crate::sql_err;

/// A field as an SQL scalar expression and its parameters.
fn scalar(field: &str) -> (String, Vec<Sql>) {
    match column(field) {
        Some(col) => (col.to_string(), Vec::new()),
        None => (
            "json_extract(d.metadata, ?)".into(),
            vec![Sql::Text(json_path(field))],
        ),
    }
}

/// The WHERE clause of a document-level query, refusing chunk conditions.
fn document_filter(library_id: i64, filter: &Filter) -> Result<(String, Vec<Sql>)> {
    if filter
        .conditions
        .iter()
        .any(|c| matches!(c, Condition::SectionPrefix(_)))
    {
        return Err(StoreError::InvalidArgument(
            "section_prefix filters chunks; it does not apply to documents".into(),
        ));
    }
    let (clause, mut params) = filter_sql::where_clause(filter);
    params.insert(0, Sql::Integer(library_id));
    Ok((format!("d.library_id = ?{clause}"), params))
}

fn json_of(value: Sql) -> Value {
    match value {
        Sql::Null => Value::Null,
        Sql::Integer(i) => Value::from(i),
        Sql::Real(f) => Value::from(f),
        Sql::Text(t) => Value::String(t),
        Sql::Blob(_) => Value::Null,
    }
}

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

/// Facets in one pass over the filtered records: the fields each needs are
/// read once per record (its metadata parsed once), grouped in memory.
pub fn facets(conn: &Connection, library_id: i64, request: &FacetRequest) -> Result<Facets> {
    let (filter_sql, filter_params) = document_filter(library_id, &request.filter)?;
    let top_field = request.top_values.as_ref().map(|(field, _)| field);
    let mut columns: Vec<(&String, &str)> = Vec::new();
    for field in request
        .group_by
        .iter()
        .chain(&request.stats)
        .chain(top_field)
    {
        if let Some(col) = column(field)
            && !columns.iter().any(|(f, _)| *f == field)
        {
            columns.push((field, col));
        }
    }
    let select: Vec<&str> = std::iter::once("d.metadata")
        .chain(columns.iter().map(|(_, col)| *col))
        .collect();
    let sql = format!(
        "SELECT {} FROM documents d WHERE {filter_sql}",
        select.join(", ")
    );
    let mut stmt = conn.prepare(&sql).map_err(sql_err("computing facets"))?;
    let mut rows = stmt
        .query(params_from_iter(filter_params))
        .map_err(sql_err("computing facets"))?;
    let mut groups: HashMap<String, GroupAccumulator> = HashMap::new();
    let new_group = |key: Vec<Value>| GroupAccumulator {
        key,
        count: 0,
        stats: request
            .stats
            .iter()
            .map(|_| StatAccumulator::default())
            .collect(),
        top: HashMap::new(),
    };
    if request.group_by.is_empty() {
        groups.insert(String::new(), new_group(Vec::new()));
    }
    let mut documents = 0u64;
    while let Some(row) = rows.next().map_err(sql_err("computing facets"))? {
        documents += 1;
        let metadata: String = row.get(0).map_err(sql_err("computing facets"))?;
        let mut fields: Map<String, Value> = serde_json::from_str(&metadata).unwrap_or_default();
        for (i, (field, _)) in columns.iter().enumerate() {
            let value = row
                .get::<_, Sql>(i + 1)
                .map_err(sql_err("computing facets"))?;
            fields.insert((*field).clone(), json_of(value));
        }
        let values: Vec<Option<Value>> = request
            .stats
            .iter()
            .map(|f| fields.get(f).and_then(sql_scalar))
            .collect();
        let mut tags: Vec<String> = top_field
            .map(|f| members(fields.get(f)))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect();
        tags.sort_unstable();
        tags.dedup();
        let mut seen = std::collections::HashSet::new();
        for key in key_combinations(&fields, &request.group_by) {
            let order = key_order(&key);
            if !seen.insert(order.clone()) {
                continue;
            }
            let group = groups.entry(order).or_insert_with(|| new_group(key));
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
    // Largest first, ties by key (the map's key is the key's order).
    let mut groups: Vec<(String, GroupAccumulator)> = groups
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
    Ok(Facets {
        groups,
        total_groups,
        documents,
    })
}

fn key_order(key: &[Value]) -> String {
    key.iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\u{1}")
}

pub fn neighbours(
    conn: &Connection,
    id: &DocumentId,
    order: &NeighbourOrder,
) -> Result<(Option<DocumentSummary>, Option<DocumentSummary>)> {
    let (library_id, this): (i64, Sql) = {
        let (expr, params) = scalar(&order.order_by);
        let sql = format!("SELECT d.library_id, {expr} FROM documents d WHERE d.id = ?");
        let params: Vec<Sql> = params
            .into_iter()
            .chain([Sql::Text(id.to_string())])
            .collect();
        conn.query_row(&sql, params_from_iter(params), |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
        .map_err(sql_err("reading a document"))?
        .ok_or_else(|| StoreError::NotFound {
            what: "document",
            id: id.to_string(),
        })?
    };
    if this == Sql::Null {
        return Ok((None, None));
    }
    // Same group: each group field equal (missing equals missing).
    let mut same = String::new();
    let mut same_params = Vec::new();
    for field in &order.group_by {
        // The same expression over the other document and over this one.
        let (expr, params) = scalar(field);
        same.push_str(&format!(
            " AND {expr} IS (SELECT {} FROM documents d2 WHERE d2.id = ?)",
            expr.replace("d.", "d2.")
        ));
        same_params.extend(params.iter().cloned());
        same_params.extend(params);
        same_params.push(Sql::Text(id.to_string()));
    }
    let (expr, order_params) = scalar(&order.order_by);
    let find = |before: bool| -> Result<Option<DocumentSummary>> {
        let (cmp, dir) = if before { ("<", "DESC") } else { (">", "ASC") };
        let ties = if order.strict {
            String::new()
        } else {
            format!(" OR ({expr} = ? AND d.id {cmp} ?)")
        };
        let sql = format!(
            "SELECT {DOCUMENT_COLUMNS} FROM documents d JOIN libraries l ON l.id = d.library_id
             WHERE d.library_id = ? AND d.id != ?{same}
               AND ({expr} {cmp} ?{ties})
             ORDER BY {expr} {dir}, d.id {dir} LIMIT 1"
        );
        let mut params = vec![Sql::Integer(library_id), Sql::Text(id.to_string())];
        params.extend(same_params.iter().cloned());
        params.extend(order_params.iter().cloned());
        params.push(this.clone());
        if !order.strict {
            params.extend(order_params.iter().cloned());
            params.push(this.clone());
            params.push(Sql::Text(id.to_string()));
        }
        params.extend(order_params.iter().cloned());
        conn.query_row(&sql, params_from_iter(params), summary_from_row)
            .optional()
            .map_err(sql_err("finding neighbours"))
    };
    Ok((find(true)?, find(false)?))
}

pub fn find_documents(
    conn: &Connection,
    library_id: i64,
    filter: &Filter,
    limit: usize,
) -> Result<Vec<DocumentSummary>> {
    let (filter_sql, mut params) = document_filter(library_id, filter)?;
    params.push(Sql::Integer(limit.min(i64::MAX as usize) as i64));
    let sql = format!(
        "SELECT {DOCUMENT_COLUMNS} FROM documents d JOIN libraries l ON l.id = d.library_id
         WHERE {filter_sql} ORDER BY d.source, d.id LIMIT ?"
    );
    let mut stmt = conn.prepare(&sql).map_err(sql_err("finding documents"))?;
    stmt.query_map(params_from_iter(params), summary_from_row)
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(sql_err("finding documents"))
}
