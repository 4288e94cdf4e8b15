//! Record queries over the documents table: facets (groups with counts,
//! statistics and top tag values, aggregated in one pass over the filtered
//! records), neighbours in a field's order, document lookups by filter.
//! Field names reach SQL only as bound JSON paths.

use folio_core::{Condition, DocumentId, DocumentSummary, Filter, NeighbourOrder};
use folio_store::facets::Aggregator;
use folio_store::{FacetRequest, Facets, Result, StoreError};
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
    if filter.conditions.iter().any(Condition::on_chunks) {
        return Err(StoreError::InvalidArgument(
            folio_store::CHUNK_CONDITIONS.into(),
        ));
    }
    let (clause, mut params) = filter_sql::where_clause(filter, library_id);
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

/// Facets in one pass over the filtered records: the fields each needs are
/// read once per record (its metadata parsed once), grouped in memory.
pub fn facets(conn: &Connection, library_id: i64, request: &FacetRequest) -> Result<Facets> {
    let (filter_sql, filter_params) = document_filter(library_id, &request.filter)?;
    let mut aggregator = Aggregator::new(request);
    let columns: Vec<(&String, &str)> = aggregator
        .fields()
        .into_iter()
        .filter_map(|field| column(field).map(|col| (field, col)))
        .collect();
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
    while let Some(row) = rows.next().map_err(sql_err("computing facets"))? {
        let metadata: String = row.get(0).map_err(sql_err("computing facets"))?;
        let mut fields: Map<String, Value> = serde_json::from_str(&metadata).unwrap_or_default();
        for (i, (field, _)) in columns.iter().enumerate() {
            let value = row
                .get::<_, Sql>(i + 1)
                .map_err(sql_err("computing facets"))?;
            fields.insert((*field).clone(), json_of(value));
        }
        aggregator.add(&fields);
    }
    Ok(aggregator.finish())
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
    // Ordered by source, SQLite walks the (library, source) index and tests
    // each document, even when an equality on the content hash would find
    // the one or two it wants through (library, content_hash): ingest's
    // twin lookup then read the whole library per document (O(n²): a
    // 100,000-file folder slowed from 220 to 64 documents/s). `+` keeps the
    // order from choosing the index; the few matches are sorted.
    let by_hash = filter.conditions.iter().any(
        |c| matches!(c, Condition::Equals { field, .. } if column(field) == Some("d.content_hash")),
    );
    let order = if by_hash { "+d.source" } else { "d.source" };
    let sql = format!(
        "SELECT {DOCUMENT_COLUMNS} FROM documents d JOIN libraries l ON l.id = d.library_id
         WHERE {filter_sql} ORDER BY {order}, d.id LIMIT ?"
    );
    let mut stmt = conn.prepare(&sql).map_err(sql_err("finding documents"))?;
    stmt.query_map(params_from_iter(params), summary_from_row)
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(sql_err("finding documents"))
}
