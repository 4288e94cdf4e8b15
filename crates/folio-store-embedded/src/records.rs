//! Record queries over the documents table: facets (groups with counts,
//! statistics and top tag values), neighbours in a field's order, document
//! lookups by filter. Field names reach SQL only as bound JSON paths.

use std::collections::{BTreeMap, HashMap};

use folio_core::{Condition, DocumentId, DocumentSummary, Filter, NeighbourOrder};
use folio_store::{FacetGroup, FacetRequest, Facets, FieldStats, Result, StoreError};
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, params_from_iter};
use serde_json::Value;

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

/// A field as a table of its values: one row for a scalar, one per item for
/// a list.
fn values_table(field: &str) -> (String, Vec<Sql>) {
    match column(field) {
        Some(col) => (format!("json_each(json_array({col}))"), Vec::new()),
        None => (
            "json_each(d.metadata, ?)".into(),
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

/// SQL for the group columns: `g0.value, g1.value, ...` and the joins.
fn groups_sql(request: &FacetRequest) -> (String, String, Vec<Sql>) {
    let mut joins = String::new();
    let mut params = Vec::new();
    let mut keys = Vec::new();
    for (i, field) in request.group_by.iter().enumerate() {
        let (table, p) = values_table(field);
        joins.push_str(&format!(", {table} g{i}"));
        params.extend(p);
        keys.push(format!("g{i}.value"));
    }
    (keys.join(", "), joins, params)
}

pub fn facets(conn: &Connection, library_id: i64, request: &FacetRequest) -> Result<Facets> {
    let (filter_sql, filter_params) = document_filter(library_id, &request.filter)?;
    let documents: i64 = conn
        .query_row(
            &format!("SELECT COUNT(*) FROM documents d WHERE {filter_sql}"),
            params_from_iter(filter_params.clone()),
            |r| r.get(0),
        )
        .map_err(sql_err("counting documents"))?;
    let (keys, joins, group_params) = groups_sql(request);
    let mut select = vec!["COUNT(DISTINCT d.id)".to_string()];
    let mut params: Vec<Sql> = Vec::new();
    for field in &request.stats {
        let (expr, p) = scalar(field);
        // min, max, sum of numbers, count of values: the expression four times.
        select.push(format!("MIN({expr})"));
        select.push(format!("MAX({expr})"));
        select.push(format!(
            "SUM(CASE WHEN typeof({expr}) IN ('integer', 'real') THEN {expr} END)"
        ));
        select.push(format!("COUNT({expr})"));
        for _ in 0..5 {
            params.extend(p.iter().cloned());
        }
    }
    let n_keys = request.group_by.len();
    let key_select = if n_keys == 0 {
        String::new()
    } else {
        format!("{keys}, ")
    };
    let group_clause = if n_keys == 0 {
        String::new()
    } else {
        format!(" GROUP BY {keys}")
    };
    let sql = format!(
        "SELECT {key_select}{} FROM documents d{joins} WHERE {filter_sql}{group_clause}",
        select.join(", ")
    );
    let all_params: Vec<Sql> = params
        .into_iter()
        .chain(group_params.iter().cloned())
        .chain(filter_params.iter().cloned())
        .collect();
    let mut stmt = conn.prepare(&sql).map_err(sql_err("computing facets"))?;
    let mut groups: Vec<FacetGroup> = stmt
        .query_map(params_from_iter(all_params), |r| {
            let mut key = Vec::with_capacity(n_keys);
            for i in 0..n_keys {
                key.push(json_of(r.get::<_, Sql>(i)?));
            }
            let count = r.get::<_, i64>(n_keys)? as u64;
            let mut stats = BTreeMap::new();
            for (j, field) in request.stats.iter().enumerate() {
                let at = n_keys + 1 + j * 4;
                let sum = match r.get::<_, Sql>(at + 2)? {
                    Sql::Integer(i) => Some(i as f64),
                    Sql::Real(f) => Some(f),
                    _ => None,
                };
                stats.insert(
                    field.clone(),
                    FieldStats {
                        min: json_of(r.get::<_, Sql>(at)?),
                        max: json_of(r.get::<_, Sql>(at + 1)?),
                        sum,
                        count: r.get::<_, i64>(at + 3)? as u64,
                    },
                );
            }
            Ok(FacetGroup {
                key,
                count,
                stats,
                top_values: Vec::new(),
            })
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(sql_err("computing facets"))?;
    groups.retain(|g| g.count >= request.min_count.max(1) || n_keys == 0);
    let total_groups = groups.len() as u64;
    groups.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| key_order(&a.key).cmp(&key_order(&b.key)))
    });
    groups.truncate(request.limit);
    if let Some((field, n)) = &request.top_values
        && !groups.is_empty()
    {
        top_values(
            conn,
            request,
            field,
            *n,
            &filter_sql,
            &filter_params,
            &mut groups,
        )?;
    }
    Ok(Facets {
        groups,
        total_groups,
        documents: documents as u64,
    })
}

fn key_order(key: &[Value]) -> String {
    key.iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\u{1}")
}

/// Fills each group's most frequent values of the list field `field`.
fn top_values(
    conn: &Connection,
    request: &FacetRequest,
    field: &str,
    n: usize,
    filter_sql: &str,
    filter_params: &[Sql],
    groups: &mut [FacetGroup],
) -> Result<()> {
    let (keys, joins, group_params) = groups_sql(request);
    let (table, table_params) = values_table(field);
    let key_select = if request.group_by.is_empty() {
        String::new()
    } else {
        format!("{keys}, ")
    };
    let sql = format!(
        "SELECT {key_select}t.value, COUNT(DISTINCT d.id) FROM documents d{joins}, {table} t
         WHERE {filter_sql} AND t.type = 'text' GROUP BY {key_select}t.value"
    );
    let params: Vec<Sql> = group_params
        .into_iter()
        .chain(table_params)
        .chain(filter_params.iter().cloned())
        .collect();
    let n_keys = request.group_by.len();
    let mut stmt = conn
        .prepare(&sql)
        .map_err(sql_err("computing top values"))?;
    let rows = stmt
        .query_map(params_from_iter(params), |r| {
            let mut key = Vec::with_capacity(n_keys);
            for i in 0..n_keys {
                key.push(json_of(r.get::<_, Sql>(i)?));
            }
            Ok((
                key,
                r.get::<_, String>(n_keys)?,
                r.get::<_, i64>(n_keys + 1)? as u64,
            ))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(sql_err("computing top values"))?;
    let mut by_group: HashMap<String, Vec<(String, u64)>> = HashMap::new();
    for (key, value, count) in rows {
        by_group
            .entry(key_order(&key))
            .or_default()
            .push((value, count));
    }
    for group in groups {
        if let Some(mut values) = by_group.remove(&key_order(&group.key)) {
            values.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            values.truncate(n);
            group.top_values = values;
        }
    }
    Ok(())
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
        let sql = format!(
            "SELECT {DOCUMENT_COLUMNS} FROM documents d JOIN libraries l ON l.id = d.library_id
             WHERE d.library_id = ? AND d.id != ?{same}
               AND ({expr} {cmp} ? OR ({expr} = ? AND d.id {cmp} ?))
             ORDER BY {expr} {dir}, d.id {dir} LIMIT 1"
        );
        let mut params = vec![Sql::Integer(library_id), Sql::Text(id.to_string())];
        params.extend(same_params.iter().cloned());
        params.extend(order_params.iter().cloned());
        params.push(this.clone());
        params.extend(order_params.iter().cloned());
        params.push(this.clone());
        params.push(Sql::Text(id.to_string()));
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
