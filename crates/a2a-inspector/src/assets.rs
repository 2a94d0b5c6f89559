//! The console's files, embedded in the binary: HTML, CSS and JavaScript modules, served as
//! they are (no build step, nothing fetched from elsewhere, so it works offline).

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

/// Every file: its path under `/inspector/`, its media type and its content.
pub const FILES: &[(&str, &str, &str)] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("../assets/index.html"),
    ),
    (
        "inspector.css",
        "text/css; charset=utf-8",
        include_str!("../assets/inspector.css"),
    ),
    ("js/main.js", JS, include_str!("../assets/js/main.js")),
    ("js/dom.js", JS, include_str!("../assets/js/dom.js")),
    ("js/a2a.js", JS, include_str!("../assets/js/a2a.js")),
    ("js/sse.js", JS, include_str!("../assets/js/sse.js")),
    ("js/wire.js", JS, include_str!("../assets/js/wire.js")),
    ("js/parts.js", JS, include_str!("../assets/js/parts.js")),
    ("js/agents.js", JS, include_str!("../assets/js/agents.js")),
    ("js/chat.js", JS, include_str!("../assets/js/chat.js")),
    ("js/tasks.js", JS, include_str!("../assets/js/tasks.js")),
    ("js/push.js", JS, include_str!("../assets/js/push.js")),
    ("js/host.js", JS, include_str!("../assets/js/host.js")),
    ("js/session.js", JS, include_str!("../assets/js/session.js")),
];

const JS: &str = "text/javascript; charset=utf-8";

pub(crate) fn routes() -> Router {
    Router::new()
        .route(
            crate::PATH,
            get(|| async { Redirect::permanent("/inspector/") }),
        )
        .route(
            &format!("{}/", crate::PATH),
            get(|| async { file("index.html") }),
        )
        .route(
            &format!("{}/{{*path}}", crate::PATH),
            get(|Path(path): Path<String>| async move { file(&path) }),
        )
}

/// The page for `/` when a browser asks for it.
pub fn index() -> Response {
    file("index.html")
}

fn file(path: &str) -> Response {
    let Some((_, media_type, body)) = FILES.iter().find(|(p, _, _)| *p == path) else {
        return (StatusCode::NOT_FOUND, "no such file of the console").into_response();
    };
    let mut resp = (*body).into_response();
    let headers = resp.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    // The files change with the binary: a browser asks again each time, cheaply.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data: blob: https: http:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}
