//! The MCP handler, the protocol's edge: server info and instructions,
//! paginated tool listing, argument coercion and dispatch of tool calls to
//! the toolset that owns the tool (`toolsets::call`), the call log, and
//! libraries and documents as resources. Every request is authorised
//! through `access` (one mapping from method to scope, on every transport)
//! before any work, and every request that reads data is audited.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::json;

use folio_engine::keys::Principal;

use super::access::{self, Denied};
use super::apps;
use super::session::Session;

use crate::ops::telemetry::CallRecord;
use crate::ops::{self, Call, Shared, Touches};
use crate::options::Toolset;
use crate::tool::scope;
use crate::toolsets;

/// One MCP session's handler; all sessions of a process share `Shared`.
#[derive(Clone)]
pub struct FolioServer {
    shared: Arc<Shared>,
    /// This session's logging level and followed resources.
    session: Arc<Session>,
}

impl FolioServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        FolioServer {
            shared,
            session: Arc::new(Session::default()),
        }
    }

    /// Who makes a request: the principal its transport attached to it
    /// (the SSE transport to each message; the HTTP guard to each HTTP
    /// request, which streamable HTTP hands over as its parts); None where
    /// no credential is asked. Never a session's: a session has the rights
    /// of the credential of each request.
    fn caller(&self, context: &RequestContext<RoleServer>) -> Option<Principal> {
        principal_in(&context.extensions)
    }

    /// Instructions for the agent, built from the index as it is now.
    fn instructions(&self) -> String {
        let shared = &self.shared;
        let mut text = String::from(
            "folio is a local document knowledge server. Search returns citation-ready hits \
             (document, page span, section path); read more with get_document or get_chunks.\n",
        );
        let toolsets: Vec<&str> = shared
            .registry
            .toolsets()
            .iter()
            .map(|t| t.as_str())
            .collect();
        text.push_str(&format!("Toolsets: {}.", toolsets.join(", ")));
        if shared.options.read_only {
            text.push_str(" This server is read-only.");
        }
        text.push('\n');
        // Library names are for the local user or an open server: a server
        // that asks for keys does not list them before it knows the caller.
        let libraries = if shared.options.keys_required {
            Ok(Vec::new())
        } else {
            shared.engine.libraries()
        };
        match libraries {
            Ok(libraries) if libraries.is_empty() && shared.options.keys_required => text.push_str(
                "Call list_libraries (or your toolset's listing) for the libraries you may use.\n",
            ),
            Ok(libraries) if libraries.is_empty() => {
                text.push_str("No libraries yet: ingest documents to create one.\n")
            }
            Ok(libraries) => {
                text.push_str("Libraries:\n");
                for library in libraries.iter().take(50) {
                    text.push_str(&format!(
                        "- {}: {} documents, {} chunks, model {} ({}-d)\n",
                        library.name,
                        library.document_count,
                        library.chunk_count,
                        library.space.model,
                        library.space.dim
                    ));
                }
                if libraries.len() > 50 {
                    text.push_str(&format!(
                        "… and {} more (list_libraries)\n",
                        libraries.len() - 50
                    ));
                }
            }
            Err(e) => text.push_str(&format!("The index could not be read: {e}\n")),
        }
        if shared.registry.has_toolset(Toolset::Native) {
            text.push_str(
                "Start with search in response_mode metadata or preview, then fetch the text you need; \
                 responses stay within max_output_chars and give a cursor for the next page.",
            );
        }
        text
    }
}

/// The principal a transport attached to a message: to the message itself
/// (SSE), or to the HTTP request that carried it (streamable HTTP).
fn principal_in(extensions: &rmcp::model::Extensions) -> Option<Principal> {
    extensions.get::<Principal>().cloned().or_else(|| {
        extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>().cloned())
    })
}

/// The JSON-RPC error of a request its caller may not make.
fn denial(method: &str, denied: &Denied) -> McpError {
    match denied {
        Denied::Unserved => McpError::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("folio does not serve {method}"),
            None,
        ),
        Denied::Scope(scope) => McpError::new(
            rmcp::model::ErrorCode::INVALID_REQUEST,
            format!(
                "forbidden: {method} needs the {} scope, which the caller lacks",
                scope.as_str()
            ),
            Some(json!({"code": "forbidden", "required_scope": scope.as_str()})),
        ),
    }
}

/// How a request that is not a tool call ended, for the audit log.
fn request_outcome<T>(answer: &Result<T, McpError>) -> &'static str {
    match answer {
        Ok(_) => "ok",
        Err(e) if e.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND => "not_found",
        Err(e) if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND => "unserved",
        Err(e) if e.code == rmcp::model::ErrorCode::INVALID_REQUEST => "forbidden",
        Err(_) => "error",
    }
}

impl FolioServer {
    /// Answers a request that is not a tool call (tool calls answer a
    /// refusal in their toolset's envelope) once `access` lets its caller
    /// make it, and writes its audit line: resource reads and refusals are
    /// counted and audited as tool calls are.
    async fn answered<T, F>(
        &self,
        method: &str,
        resource: Option<&str>,
        context: &RequestContext<RoleServer>,
        answer: impl FnOnce(Option<Principal>) -> F,
    ) -> Result<T, McpError>
    where
        F: std::future::Future<Output = Result<T, McpError>>,
    {
        let started = std::time::Instant::now();
        let caller = self.caller(context);
        let need = access::need(method, None, &self.shared.registry);
        let result = match access::permit(caller.as_ref(), need) {
            Ok(()) => answer(caller.clone()).await,
            Err(denied) => {
                self.shared.telemetry.auth_failed("insufficient scope");
                Err(denial(method, &denied))
            }
        };
        let outcome = request_outcome(&result);
        let correlation_id = uuid::Uuid::new_v4().to_string();
        tracing::info!(
            method = %method,
            resource = resource.unwrap_or(""),
            correlation_id = %correlation_id,
            duration_ms = started.elapsed().as_millis() as u64,
            outcome = %outcome,
            "request"
        );
        let library = resource.and_then(resource_library);
        let shared = &self.shared;
        shared.telemetry.record(&CallRecord {
            caller: caller.as_ref().map(|p| p.name.as_str()),
            transport: &shared.options.transport,
            operation: method,
            library: library.as_deref(),
            outcome,
            duration: started.elapsed(),
            correlation_id: &correlation_id,
            query: None,
        });
        result
    }

    /// A method folio does not offer but that the mapping gives a scope
    /// (it reads what resources read): refused as resources are to a caller
    /// without it, else answered method-not-found.
    async fn not_offered<T>(
        &self,
        method: &'static str,
        resource: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> Result<T, McpError> {
        self.answered(method, resource, context, |_| async move {
            Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                method,
                None,
            ))
        })
        .await
    }
}

impl FolioServer {
    /// Starts the call as a background job once its arguments check out
    /// (else the refusal the call would have answered). The job outlives
    /// the request and the session: it ends when its work does, or when
    /// `cancel_job` (`tasks/cancel`) stops it.
    fn start_job(
        &self,
        toolset: Toolset,
        name: &str,
        arguments: Option<rmcp::model::JsonObject>,
        call: &Call,
    ) -> Result<Arc<ops::jobs::Job>, rmcp::model::CallToolResult> {
        let library = toolsets::background_library(toolset, name, arguments.clone())?;
        let shared = self.shared.clone();
        let job = ops::jobs::registry().start(name, &library, call.principal.clone());
        let job_call = Call::for_job(name, &job);
        let tool = name.to_string();
        let running = job.clone();
        tokio::spawn(async move {
            let job = running;
            let started = std::time::Instant::now();
            let result = toolsets::call(toolset, &shared, &tool, arguments, &job_call).await;
            job.finished(&result);
            tracing::info!(
                job = %job.id,
                tool = %tool,
                duration_ms = started.elapsed().as_millis() as u64,
                "background job finished"
            );
        });
        Ok(job)
    }
}

/// A background job as a task of the Tasks extension (SEP-2663): working
/// (its progress as the status message), completed with the tool's result
/// (an error result included, as the extension says), or cancelled.
fn task_of(job: &ops::jobs::Job) -> rmcp::model::DetailedTask {
    use rmcp::model::{Task, TaskPayload, TaskStatus};
    let state = job.output_for(None);
    let updated = state
        .finished_at
        .clone()
        .unwrap_or_else(|| folio_engine::rfc3339(std::time::SystemTime::now()));
    let message = format!(
        "{} of {} steps; {} documents settled, {} failed",
        state.progress.done, state.progress.total, state.progress.documents, state.progress.failed
    );
    let task = Task::new(
        job.id.clone(),
        TaskStatus::Working,
        state.created_at,
        updated,
    )
    .with_status_message(message)
    .with_poll_interval_ms(1000);
    let payload = match state.status.as_str() {
        "cancelled" => TaskPayload::Cancelled,
        "completed" | "failed" => match job.answer() {
            Some(serde_json::Value::Object(result)) => TaskPayload::Completed { result },
            _ => TaskPayload::Completed {
                result: Default::default(),
            },
        },
        _ => TaskPayload::Working,
    };
    rmcp::model::DetailedTask::new(task, payload)
}

fn no_task(id: &str) -> McpError {
    McpError::invalid_params(format!("no task {id}"), Some(json!({"task_id": id})))
}

/// The library a resource URI names, when it names one.
fn resource_library(uri: &str) -> Option<String> {
    let rest = uri
        .strip_prefix("folio://library/")
        .or_else(|| uri.strip_prefix("folio://entity/"))?;
    Some(rest.split('/').next().unwrap_or(rest).to_string())
}

/// Builds a protocol result from its JSON form (the SDK's result types are
/// non-exhaustive; their wire form is the stable contract).
fn from_json<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| McpError::internal_error(e.to_string(), None))
}

/// How a call ended, for the call log: "ok", or the error code the
/// toolset answered with.
fn outcome(result: &rmcp::model::CallToolResult) -> String {
    if result.is_error != Some(true) {
        return "ok".into();
    }
    let content = result.structured_content.as_ref();
    content
        .and_then(|c| c.get("error"))
        .and_then(|e| e.get("code"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or("error")
        .to_string()
}

fn resource_not_found(uri: &str) -> McpError {
    McpError::resource_not_found(format!("no resource {uri}"), None)
}

impl ServerHandler for FolioServer {
    // Logging (deprecated by SEP-2577) carries the hansard toolset's info
    // messages to clients of the 2025 revision.
    #[allow(deprecated)]
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_logging()
            .enable_tasks()
            .build();
        let (name, version) = self.shared.options.identity();
        let mut implementation = Implementation::new(name, version);
        implementation.title = Some("folio document knowledge server".into());
        InitializeResult::new(capabilities)
            .with_server_info(implementation)
            .with_instructions(self.instructions())
    }

    /// The handshake, with the MCP Apps extension declared back to a
    /// client that declared it.
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        if apps::supported(Some(&request.capabilities)) {
            let (name, declared) = apps::server_extension();
            result
                .capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(name, declared);
        }
        Ok(result)
    }

    /// A session of a server that watches folders hears
    /// `notifications/resources/list_changed` after each pass that changed
    /// a library (until its transport closes).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.session.heard_by(principal_in(&context.extensions));
        if ops::watch::active() {
            self.session
                .follow(self.shared.clone(), context.peer.clone());
        }
    }

    /// The least severity of the log messages this session hears: its
    /// calls' (each document an ingest settles, a toolset's info messages)
    /// and, about libraries the caller may read, the server's (watch
    /// passes, files a pass cannot index).
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let peer = context.peer.clone();
        self.answered("logging/setLevel", None, &context, |caller| async move {
            self.session.set_level(ops::severity(request.level), caller);
            self.session.follow(self.shared.clone(), peer);
            Ok(())
        })
        .await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .map_err(|_| McpError::invalid_params("invalid cursor", None))?,
        };
        let page = self.shared.options.tools_page_size.max(1);
        // A key sees only the tools it may call.
        let caller = self.caller(&context);
        let views = apps::supported(context.client_capabilities().as_ref());
        let registry = &self.shared.registry;
        let tools: Vec<_> = registry
            .tools()
            .filter(|t| caller.as_ref().is_none_or(|p| p.may(scope(t))))
            .cloned()
            .map(|t| match views {
                true => {
                    let native = registry.find(&t.name).map(|(s, _)| s) == Some(Toolset::Native);
                    apps::with_view(t, native)
                }
                false => t,
            })
            .collect();
        if start > tools.len() {
            return Err(McpError::invalid_params("invalid cursor", None));
        }
        let end = (start + page).min(tools.len());
        let mut result = ListToolsResult::with_all_items(tools[start..end].to_vec());
        result.next_cursor = (end < tools.len()).then(|| end.to_string());
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.shared.registry.find(name).map(|(_, t)| t.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let Some((toolset, tool)) = self.shared.registry.find(&name) else {
            return Err(McpError::invalid_params(
                format!("unknown tool: {name}"),
                Some(json!({"tool": name})),
            ));
        };
        let arguments = request.arguments.map(|mut arguments| {
            crate::tool::coerce_arguments(&tool.input_schema, &mut arguments);
            arguments
        });
        // The library a call names, for its audit line (seed dialects call it
        // library or project).
        let library = arguments.as_ref().and_then(|a| {
            ["library", "project"]
                .iter()
                .find_map(|key| a.get(*key).and_then(serde_json::Value::as_str))
                .map(str::to_string)
        });
        // The query, for audit lines only where the server logs queries.
        let query = arguments
            .as_ref()
            .filter(|_| self.shared.options.audit_queries)
            .and_then(|a| {
                ["query", "text", "passage"]
                    .iter()
                    .find_map(|key| a.get(*key).and_then(serde_json::Value::as_str))
                    .map(str::to_string)
            });
        let token = context.meta.get_progress_token();
        // A request of the 2026 revision may name its own log level.
        #[allow(deprecated)]
        let level = match context.meta.log_level() {
            Some(level) => Arc::new(std::sync::atomic::AtomicU8::new(ops::severity(level) as u8)),
            None => self.session.level.clone(),
        };
        let call = Call::new(
            name.as_str(),
            context.ct.child_token(),
            context.peer.clone(),
            token,
            level,
        )
        .by(self.caller(&context));
        let shared = self.shared.clone();
        let started = std::time::Instant::now();
        // Refused before any work when the caller lacks the tool's scope
        // (the scope `access` maps tools/call of this tool to).
        let allowed = match &call.principal {
            Some(principal) => principal.require(scope(tool), &format!("the tool {name}")),
            None => Ok(()),
        };
        // An ingest asked to run in the background answers its job at once;
        // so does one a client of the Tasks extension sends, as a task.
        let mut arguments = arguments;
        let runs_long = toolset == Toolset::Native && name == "ingest";
        let background = runs_long
            && arguments
                .as_mut()
                .and_then(|a| a.remove("background"))
                .is_some_and(|flag| flag == serde_json::Value::Bool(true));
        // The client signals support for tasks in the request's own
        // capabilities (SEP-2663); one that declares the extension only at
        // initialisation (the MCP Inspector 2.12 does, and its tools/call
        // cannot read a task) gets the plain result.
        let as_task = runs_long
            && context
                .meta
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks());
        let mut task = None;
        let result = match allowed {
            Ok(()) if background || as_task => {
                match self.start_job(toolset, &name, arguments, &call) {
                    Ok(job) => {
                        let answer = crate::tool::success(&job.output_for(call.principal.as_ref()));
                        task = as_task.then_some(job);
                        answer
                    }
                    Err(refusal) => refusal,
                }
            }
            Ok(()) => toolsets::call(toolset, &shared, &name, arguments, &call).await,
            Err(refused) => toolsets::refusal(toolset, &shared, &call, &refused),
        };
        call.flush().await;
        // One line per call, to trace a response's correlation id: never
        // the arguments (document text, queries) themselves.
        let outcome = outcome(&result);
        tracing::info!(
            tool = %name,
            toolset = %toolset,
            correlation_id = %call.correlation_id,
            duration_ms = started.elapsed().as_millis() as u64,
            outcome = %outcome,
            "tool call"
        );
        shared.telemetry.record(&CallRecord {
            caller: call.principal.as_ref().map(|p| p.name.as_str()),
            transport: &shared.options.transport,
            operation: &name,
            library: library.as_deref(),
            outcome: &outcome,
            duration: started.elapsed(),
            correlation_id: &call.correlation_id,
            query: query.as_deref(),
        });
        if let Some(job) = task {
            return Ok(CallToolResponse::Task(rmcp::model::CreateTaskResult::new(
                task_of(&job).task,
            )));
        }
        Ok(result.into())
    }

    /// The state of a task (a background job) the caller may see.
    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        self.answered("tasks/get", None, &context, |caller| async move {
            let job = ops::jobs::registry().find(&request.task_id, caller.as_ref());
            job.map(|job| rmcp::model::GetTaskResult::new(task_of(&job)))
                .ok_or_else(|| no_task(&request.task_id))
        })
        .await
    }

    /// Stops a task (a background job) between documents.
    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.answered("tasks/cancel", None, &context, |caller| async move {
            let job = ops::jobs::registry().find(&request.task_id, caller.as_ref());
            job.map(|job| job.cancel.cancel())
                .ok_or_else(|| no_task(&request.task_id))
        })
        .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let views = apps::supported(context.client_capabilities().as_ref())
            && self.shared.registry.has_toolset(Toolset::Native);
        self.answered("resources/list", None, &context, |caller| {
            self.resources(caller, views)
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.answered("resources/templates/list", None, &context, |_| async {
            resource_templates()
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.clone();
        self.answered("resources/read", Some(&uri), &context, |caller| {
            self.read(request.uri, caller)
        })
        .await
    }

    // Prompts, completions and resource subscriptions: folio offers none,
    // but they read what resources read, so they need the search scope
    // like resources (one mapping, `access`), then answer as the protocol's
    // defaults do.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        self.answered("prompts/list", None, &context, |_| async {
            Ok(rmcp::model::ListPromptsResult::default())
        })
        .await
    }

    async fn get_prompt(
        &self,
        _request: rmcp::model::GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        self.not_offered("prompts/get", None, &context).await
    }

    async fn complete(
        &self,
        _request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        self.answered("completion/complete", None, &context, |_| async {
            Ok(rmcp::model::CompleteResult::default())
        })
        .await
    }

    /// Follows a resource: `notifications/resources/updated` tells each
    /// change (see `session`). Any URI is accepted, one that names nothing
    /// the caller may read included, so the answer says nothing of what
    /// exists.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let uri = request.uri.clone();
        let peer = context.peer.clone();
        self.answered(
            "resources/subscribe",
            Some(&uri),
            &context,
            |caller| async move {
                self.session.heard_by(caller.clone());
                self.session
                    .followed
                    .add(&self.shared, request.uri, caller)
                    .await;
                self.session.follow(self.shared.clone(), peer);
                Ok(())
            },
        )
        .await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let uri = request.uri.clone();
        self.answered(
            "resources/unsubscribe",
            Some(&uri),
            &context,
            |_| async move {
                self.session.followed.remove(&request.uri).await;
                Ok(())
            },
        )
        .await
    }

    /// What a `subscriptions/listen` stream (2026-07-28) may carry: the
    /// resource list's changes and updates of the resources it names.
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        let mut accepted = rmcp::model::SubscriptionFilter::builder();
        if requested.resources_list_changed == Some(true) {
            accepted = accepted.resources_list_changed();
        }
        if let Some(uris) = &requested.resource_subscriptions {
            accepted = accepted.resource_subscriptions(uris.iter().cloned());
        }
        Some(accepted.build())
    }

    /// One `subscriptions/listen` stream: authorised as resource reads are,
    /// then each accepted resource followed as `resources/subscribe` follows
    /// it, until the client cancels the request or the session ends.
    async fn listen(
        &self,
        subscription: rmcp::service::SubscriptionContext,
    ) -> Result<(), McpError> {
        let context = subscription.request_context().clone();
        let accepted = subscription.accepted().clone();
        self.answered("subscriptions/listen", None, &context, |caller| async move {
            let followed = super::session::Followed::default();
            for uri in accepted.resource_subscriptions.iter().flatten() {
                followed.add(&self.shared, uri.clone(), caller.clone()).await;
            }
            let sink = subscription.sink().clone();
            let mut changes = ops::watch::changes();
            let lists = accepted.resources_list_changed == Some(true) && ops::watch::active();
            let mut check = tokio::time::interval(std::time::Duration::from_secs(1));
            loop {
                tokio::select! {
                    _ = subscription.cancelled() => return Ok(()),
                    change = changes.recv(), if lists => {
                        let tell = match change {
                            Ok(library) => super::session::may_hear_of(caller.as_ref(), &library),
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => true,
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => return Ok(()),
                        };
                        if !tell {
                            continue;
                        }
                        let notification = rmcp::model::ServerNotification::ResourceListChangedNotification(
                            rmcp::model::ResourceListChangedNotification::default(),
                        );
                        if sink.send(notification).await.is_err() {
                            return Ok(());
                        }
                    }
                    _ = check.tick() => {
                        for uri in followed.changed(&self.shared).await {
                            if sink.notify_resource_updated(uri).await.is_err() {
                                return Ok(());
                            }
                        }
                    }
                }
            }
        })
        .await
    }

    /// A method the mapping does not know is refused, whoever asks.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        // The mapping knows no custom method: `answered` refuses it before
        // the answer below could run.
        self.answered(&request.method, None, &context, |_| async {
            Err(denial(&request.method, &Denied::Unserved))
        })
        .await
    }
}

/// The resource templates folio serves.
fn resource_templates() -> Result<ListResourceTemplatesResult, McpError> {
    from_json(json!({ "resourceTemplates": [
        {
            "uriTemplate": "folio://library/{library}",
            "name": "library",
            "description": "A library: its statistics and first documents, as JSON.",
            "mimeType": "application/json"
        },
        {
            "uriTemplate": "folio://document/{document_id}",
            "name": "document",
            "description": "A document's full text as Markdown.",
            "mimeType": "text/markdown"
        },
        {
            "uriTemplate": "folio://document/{document_id}/page/{page}{?chunk}",
            "name": "page",
            "description": "A PDF document's page (from 1) as a PNG image, at most 1600 pixels \
                            on a side; with `chunk` (a chunk's index, as search hits give it), \
                            that chunk's words on the page are marked as with a highlighter.",
            "mimeType": "image/png"
        },
        {
            "uriTemplate": "folio://entity/{library}/{name}",
            "name": "entity",
            "description": "An entity's card as JSON: declared aliases, attributes and \
                            relations, mentions, top documents, evidence, related entities. \
                            The name is percent-encoded; an alias or a near miss finds it.",
            "mimeType": "application/json"
        }
    ]}))
}

impl FolioServer {
    /// The libraries `caller` may see, as resources.
    async fn resources(
        &self,
        caller: Option<Principal>,
        views: bool,
    ) -> Result<ListResourcesResult, McpError> {
        let call = Call::detached("resources/list").by(caller);
        let caller = call.clone();
        let libraries = ops::unbounded(&self.shared, &call, Touches::Visible, move |engine| {
            ops::visible(engine, &caller)
        })
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let mut resources: Vec<_> = libraries
            .iter()
            .map(|l| {
                json!({
                    "uri": format!("folio://library/{}", l.name),
                    "name": l.name.to_string(),
                    "description": format!("{} documents, {} chunks", l.document_count, l.chunk_count),
                    "mimeType": "application/json"
                })
            })
            .collect();
        if views {
            resources.push(apps::listed());
        }
        from_json(json!({ "resources": resources }))
    }

    /// The contents of the resource `uri`, as `caller` may read it.
    async fn read(
        &self,
        uri: String,
        caller: Option<Principal>,
    ) -> Result<ReadResourceResponse, McpError> {
        let shared = &self.shared;
        // A resource outside the caller's libraries reads as missing.
        let call = Call::detached("resources/read").by(caller);
        if uri == apps::VIEWER && shared.registry.has_toolset(Toolset::Native) {
            let result: ReadResourceResult = from_json(apps::contents())?;
            return Ok(result.into());
        }
        if let Some((id, page, chunk)) = page_uri(&uri) {
            let touched = id.clone();
            let image = ops::unbounded(shared, &call, Touches::Document(&touched), move |engine| {
                engine.page_image(&id, page, chunk)
            })
            .await
            .map_err(|e| match e.code {
                folio_core::ErrorCode::LibraryNotFound | folio_core::ErrorCode::Forbidden => {
                    resource_not_found(&uri)
                }
                folio_core::ErrorCode::NotFound => {
                    McpError::resource_not_found(e.message, Some(json!({"uri": uri})))
                }
                code => McpError::invalid_params(
                    e.message,
                    Some(json!({"uri": uri, "code": code.as_str()})),
                ),
            })?;
            use base64::Engine as _;
            let blob = base64::engine::general_purpose::STANDARD.encode(&image.png);
            let result: ReadResourceResult = from_json(json!({
                "contents": [{
                    "uri": uri,
                    "mimeType": "image/png",
                    "blob": blob,
                    "_meta": {"width": image.width, "height": image.height, "marks": image.marks},
                }]
            }))?;
            return Ok(result.into());
        }
        let (mime, text) = if let Some(name) = uri.strip_prefix("folio://library/") {
            let name = folio_core::LibraryName::new(name).map_err(|_| resource_not_found(&uri))?;
            let touched = name.clone();
            let stats = ops::unbounded(shared, &call, Touches::Library(&touched), move |engine| {
                let stats = engine.inspect(&name)?;
                let (documents, total) = engine.documents(&name, 0, 100)?;
                Ok((stats, documents, total))
            })
            .await
            .map_err(|_| resource_not_found(&uri))?;
            let (stats, documents, total) = stats;
            let body = json!({
                "library": stats.info.name.to_string(),
                "document_count": stats.info.document_count,
                "chunk_count": stats.info.chunk_count,
                "model": stats.info.space.model,
                "dimension": stats.info.space.dim,
                "formats": stats.formats,
                "documents_total": total,
                "documents": documents.iter().map(|d| json!({
                    "document_id": d.id.to_string(),
                    "title": d.title,
                    "source": d.source,
                    "uri": format!("folio://document/{}", d.id),
                })).collect::<Vec<_>>(),
            });
            ("application/json", body.to_string())
        } else if let Some(rest) = uri.strip_prefix("folio://entity/") {
            let (library, name) = rest
                .split_once('/')
                .ok_or_else(|| resource_not_found(&uri))?;
            let name = percent_decoded(name).ok_or_else(|| resource_not_found(&uri))?;
            let library =
                folio_core::LibraryName::new(library).map_err(|_| resource_not_found(&uri))?;
            let touched = library.clone();
            let card = ops::unbounded(shared, &call, Touches::Library(&touched), move |engine| {
                engine.entity(&library, &name)
            })
            .await
            .map_err(|_| resource_not_found(&uri))?;
            let body = serde_json::to_string(&card)
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
            ("application/json", body)
        } else if let Some(id) = uri.strip_prefix("folio://document/") {
            let id = id.to_string();
            let touched = id.clone();
            let document =
                ops::unbounded(shared, &call, Touches::Document(&touched), move |engine| {
                    engine.document(&id)
                })
                .await
                .map_err(|_| resource_not_found(&uri))?;
            ("text/markdown", document.text)
        } else {
            return Err(resource_not_found(&uri));
        };
        let result: ReadResourceResult = from_json(json!({
            "contents": [{"uri": uri, "mimeType": mime, "text": text}]
        }))?;
        Ok(result.into())
    }
}

/// The document, page and marked chunk a page image's URI names:
/// `folio://document/{id}/page/{page}` with an optional `?chunk={index}`.
fn page_uri(uri: &str) -> Option<(String, u32, Option<u32>)> {
    let rest = uri.strip_prefix("folio://document/")?;
    let (id, rest) = rest.split_once("/page/")?;
    let (page, query) = match rest.split_once('?') {
        Some((page, query)) => (page, Some(query)),
        None => (rest, None),
    };
    let chunk = match query {
        Some(query) => Some(query.strip_prefix("chunk=")?.parse().ok()?),
        None => None,
    };
    Some((id.to_string(), page.parse().ok()?, chunk))
}

/// A percent-encoded URI segment as text (None when it is not UTF-8 or an
/// escape is malformed).
fn percent_decoded(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
