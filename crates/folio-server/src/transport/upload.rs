//! `POST /upload`, the mcpvectordb contract's file upload: multipart form
//! parsing here, the ingest and its statuses in the mcpvectordb toolset.

use std::sync::Arc;

use axum::Json;
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use folio_core::ErrorCode;
use serde_json::{Map, Value, json};

use folio_engine::keys::{Principal, Scope};

use crate::ops::Shared;
use crate::ops::telemetry::CallRecord;
use crate::toolsets;

fn upload_error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    (
        status,
        Json(json!({"status": "error", "error": message.to_string()})),
    )
        .into_response()
}

/// `POST /upload` (the mcpvectordb contract, mounted with that toolset):
/// multipart `file`, optional `library` and `metadata` (a JSON object
/// string). 400 for a malformed request, 422 for an unsupported file
/// extension, 500 when ingestion fails (a corrupt or empty file among
/// them), 413 over the size limit; 403 on a read-only server, before the
/// body is read.
pub(super) async fn upload(
    State(shared): State<Arc<Shared>>,
    principal: Option<axum::Extension<Principal>>,
    request: Request,
) -> Response {
    let principal = principal.map(|axum::Extension(p)| p);
    let caller = principal.as_ref().map(|p| p.name.clone());
    let started = std::time::Instant::now();
    let mut library = None;
    let response = answer(&shared, principal, request, &mut library).await;
    // The route's audit line, as a tool call's: the outcome is "ok" or the
    // HTTP status.
    let status = response.status();
    let outcome = if status.is_success() {
        "ok".to_string()
    } else {
        status.as_u16().to_string()
    };
    shared.telemetry.record(&CallRecord {
        caller: caller.as_deref(),
        transport: "http",
        operation: "/upload",
        library: library.as_deref(),
        outcome: &outcome,
        duration: started.elapsed(),
        correlation_id: &uuid::Uuid::new_v4().to_string(),
        query: None,
    });
    response
}

/// `POST /app/upload`: the same upload from the web app's page, on every
/// server (whatever its toolsets). Only with the page's own header: a form
/// of another site cannot send it (and its Origin is refused before).
pub(super) async fn app_upload(
    State(shared): State<Arc<Shared>>,
    principal: Option<axum::Extension<Principal>>,
    request: Request,
) -> Response {
    if request.headers().get(super::app::APP_HEADER).is_none() {
        return upload_error(StatusCode::FORBIDDEN, "upload from folio's page");
    }
    upload(State(shared), principal, request).await
}

/// The upload itself; `library` is set once the form names one.
async fn answer(
    shared: &Arc<Shared>,
    principal: Option<Principal>,
    request: Request,
    library_seen: &mut Option<String>,
) -> Response {
    if let Some(Err(e)) = principal
        .as_ref()
        .map(|p| p.require(Scope::Ingest, "uploading"))
    {
        return upload_error(StatusCode::FORBIDDEN, e);
    }
    if shared.options.read_only || shared.engine.read_only() {
        return (
            StatusCode::FORBIDDEN,
            Json(json!({
                "status": "error",
                "code": ErrorCode::ReadOnly.as_str(),
                "error": "this server is read-only: uploads are refused",
            })),
        )
            .into_response();
    }
    let mut form = match Multipart::from_request(request, &()).await {
        Ok(form) => form,
        Err(e) => return upload_error(e.status(), e.body_text()),
    };
    let mut file: Option<(String, Vec<u8>)> = None;
    let mut library = "default".to_string();
    let mut metadata: Option<Map<String, Value>> = None;
    loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) => {
                return upload_error(e.status(), format!("form parse error: {}", e.body_text()));
            }
        };
        match field.name().unwrap_or("") {
            "file" => {
                let name = field.file_name().unwrap_or("").to_string();
                match field.bytes().await {
                    Ok(bytes) => file = Some((name, bytes.to_vec())),
                    Err(e) => {
                        return upload_error(
                            e.status(),
                            format!("form parse error: {}", e.body_text()),
                        );
                    }
                }
            }
            "library" => match field.text().await {
                Ok(text) if !text.trim().is_empty() => library = text.trim().to_string(),
                Ok(_) => {}
                Err(e) => {
                    return upload_error(
                        StatusCode::BAD_REQUEST,
                        format!("form parse error: {}", e.body_text()),
                    );
                }
            },
            "metadata" => match field.text().await {
                Ok(text) if text.trim().is_empty() => {}
                Ok(text) => match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(object)) => metadata = Some(object),
                    Ok(_) => {
                        return upload_error(
                            StatusCode::BAD_REQUEST,
                            "metadata must be a JSON object",
                        );
                    }
                    Err(e) => {
                        return upload_error(
                            StatusCode::BAD_REQUEST,
                            format!("invalid metadata JSON: {e}"),
                        );
                    }
                },
                Err(e) => {
                    return upload_error(
                        StatusCode::BAD_REQUEST,
                        format!("form parse error: {}", e.body_text()),
                    );
                }
            },
            _ => {}
        }
    }
    let Some((name, bytes)) = file else {
        return upload_error(StatusCode::BAD_REQUEST, "missing `file` field");
    };
    let base = name.rsplit(['/', '\\']).next().unwrap_or("").to_string();
    if base.is_empty() {
        return upload_error(
            StatusCode::BAD_REQUEST,
            "the `file` field needs a file name",
        );
    }
    let supported = folio_extract::Format::from_file_name(&base).is_some();
    if !supported {
        return upload_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "unsupported file type: {base} (PDF, Office and OpenDocument files, EPUB, HTML, Markdown, text, CSV, spreadsheets, mail, notebooks, ZIP and TAR archives, and PNG/JPEG/TIFF images are supported)"
            ),
        );
    }
    *library_seen = Some(library.clone());
    match toolsets::ingest_upload(shared, principal, &library, base, bytes, metadata).await {
        Ok(output) => (StatusCode::OK, Json(output)).into_response(),
        Err(e) => upload_error(
            StatusCode::from_u16(toolsets::upload_status(e.code))
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            e,
        ),
    }
}
