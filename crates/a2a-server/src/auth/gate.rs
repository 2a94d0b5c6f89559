//! The gate in front of an agent's JSON-RPC and HTTP+JSON routes: each request's caller is
//! authenticated before its body is read, and becomes a [`Principal`] in the request's
//! extensions; a request without valid credentials is answered 401.
//!
//! It is a service of its own rather than `axum::middleware::from_fn`: that wraps every
//! request in two more boxed futures and a boxed clone of the routes, while a caller known
//! at once ([`Authenticator::authenticate_now`]: configured tokens and keys, JWTs verified
//! before) goes straight on to the routes here. Only a caller that must be waited for (a
//! key to fetch) costs a boxed future.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use a2a_types::A2aError;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures::future::{BoxFuture, Either, Ready, ready};
use tower::{Layer, Service};

use super::{Authenticator, Principal};

/// Puts a [`GateService`] in front of routes.
#[derive(Debug, Clone)]
pub(crate) struct GateLayer(Arc<Gate>);

impl GateLayer {
    /// The gate of the agent whose JSON-RPC endpoint is at `rpc_path` (its refusals there
    /// are JSON-RPC errors; elsewhere `google.rpc.Status` bodies).
    pub(crate) fn new(auth: Arc<dyn Authenticator>, rpc_path: &str) -> Self {
        Self(Arc::new(Gate {
            auth,
            rpc_path: rpc_path.trim_end_matches('/').to_owned(),
        }))
    }
}

impl<S> Layer<S> for GateLayer {
    type Service = GateService<S>;

    fn layer(&self, inner: S) -> GateService<S> {
        GateService {
            gate: self.0.clone(),
            inner,
        }
    }
}

#[derive(Debug)]
struct Gate {
    auth: Arc<dyn Authenticator>,
    rpc_path: String,
}

impl Gate {
    /// The 401 answer to `request`, refused for `err`.
    fn refuse(&self, request: &Request, err: &A2aError) -> Response {
        crate::metrics::global().connection_refused("unauthenticated");
        let jsonrpc = request.uri().path().trim_end_matches('/') == self.rpc_path;
        unauthorized(&*self.auth, err, jsonrpc)
    }
}

/// Routes behind the gate.
#[derive(Debug, Clone)]
pub(crate) struct GateService<S> {
    gate: Arc<Gate>,
    inner: S,
}

/// The routes' own future when the caller was known at once; a refusal; or the whole
/// exchange boxed when the authenticator had to be waited for.
type GateFuture<F> = Either<
    Either<F, Ready<Result<Response, Infallible>>>,
    BoxFuture<'static, Result<Response, Infallible>>,
>;

impl<S> Service<Request> for GateService<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = GateFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        match self.gate.auth.authenticate_now(request.headers()) {
            Some(Ok(principal)) => {
                admit(&mut request, principal);
                Either::Left(Either::Left(self.inner.call(request)))
            }
            Some(Err(e)) => Either::Left(Either::Right(ready(Ok(self.gate.refuse(&request, &e))))),
            None => {
                // The service that was made ready is the one to call; the clone stays.
                let ready_inner = self.inner.clone();
                let mut inner = std::mem::replace(&mut self.inner, ready_inner);
                let gate = self.gate.clone();
                Either::Right(Box::pin(async move {
                    match gate.auth.authenticate(request.headers()).await {
                        Ok(principal) => {
                            admit(&mut request, principal);
                            inner.call(request).await
                        }
                        Err(e) => Ok(gate.refuse(&request, &e)),
                    }
                }))
            }
        }
    }
}

fn admit(request: &mut Request, principal: Principal) {
    request.extensions_mut().insert(principal);
}

/// The answer to a request that failed authentication: 401 with the challenges, and a body
/// in the shape the binding expects (a JSON-RPC error at the JSON-RPC endpoint, else a
/// `google.rpc.Status`).
fn unauthorized(auth: &dyn Authenticator, err: &A2aError, jsonrpc: bool) -> Response {
    let body = if jsonrpc {
        serde_json::json!({"jsonrpc": "2.0", "id": null, "error": err.to_jsonrpc()})
    } else {
        err.to_rest_body()
    };
    let mut resp = (axum::http::StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    for c in auth.challenges() {
        resp.headers_mut()
            .append(axum::http::header::WWW_AUTHENTICATE, c);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::StaticCredentials;
    use async_trait::async_trait;
    use axum::Router;
    use axum::body::Body;
    use axum::http::{HeaderMap, HeaderValue, StatusCode};
    use axum::routing::post;
    use std::collections::BTreeMap;
    use tower::ServiceExt;

    /// Accepts `Bearer later` as `test:later`, but only after waiting: never known at once.
    #[derive(Debug)]
    struct Waits;

    #[async_trait]
    impl Authenticator for Waits {
        fn schemes(
            &self,
        ) -> (
            BTreeMap<String, a2a_types::SecurityScheme>,
            Vec<a2a_types::SecurityRequirement>,
        ) {
            (BTreeMap::new(), Vec::new())
        }
        fn challenges(&self) -> Vec<HeaderValue> {
            vec![HeaderValue::from_static("Bearer realm=\"later\"")]
        }
        async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, A2aError> {
            tokio::task::yield_now().await;
            match crate::auth::bearer_token(headers) {
                Some("later") => Ok(Principal::new("test", "later")),
                _ => Err(A2aError::Unauthenticated {
                    detail: "not later".into(),
                }),
            }
        }
    }

    /// Routes that answer with the caller's principal, behind a gate of `auth`.
    fn routes(auth: Arc<dyn Authenticator>) -> Router {
        let who = |request: Request| async move {
            request
                .extensions()
                .get::<Principal>()
                .map_or_else(|| "nobody".to_owned(), |p| p.id().to_owned())
        };
        Router::new()
            .route("/a2a/x", post(who))
            .route("/a2a/x/tasks", post(who))
            .layer(GateLayer::new(auth, "/a2a/x/"))
    }

    async fn call(app: &Router, path: &str, token: Option<&str>) -> (StatusCode, String, bool) {
        let mut request = Request::post(path);
        if let Some(t) = token {
            request = request.header("authorization", format!("Bearer {t}"));
        }
        let response = app
            .clone()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let challenged = response.headers().contains_key("www-authenticate");
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        (
            status,
            String::from_utf8(body.to_vec()).unwrap(),
            challenged,
        )
    }

    #[tokio::test]
    async fn a_caller_known_at_once_reaches_the_routes_as_its_principal() {
        let app = routes(Arc::new(
            StaticCredentials::new().bearer("alice", "t-alice"),
        ));
        let (status, body, _) = call(&app, "/a2a/x", Some("t-alice")).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "token:alice"));
        for (path, token) in [("/a2a/x", None), ("/a2a/x/tasks", Some("t-mallory"))] {
            let (status, body, challenged) = call(&app, path, token).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{path} {token:?}");
            assert!(challenged, "a refusal names the scheme");
            assert!(!body.contains("alice"), "{body}");
            // The JSON-RPC endpoint refuses as JSON-RPC; the others as google.rpc.Status.
            assert_eq!(body.contains("\"jsonrpc\""), path == "/a2a/x", "{body}");
        }
    }

    #[tokio::test]
    async fn a_caller_that_must_be_waited_for_is_admitted_or_refused_alike() {
        let app = routes(Arc::new(Waits));
        let (status, body, _) = call(&app, "/a2a/x/tasks", Some("later")).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "test:later"));
        let (status, body, challenged) = call(&app, "/a2a/x", Some("now")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(challenged && body.contains("\"jsonrpc\""), "{body}");
    }

    #[tokio::test]
    async fn any_of_is_known_at_once_only_when_the_order_allows() {
        let creds: Arc<dyn Authenticator> =
            Arc::new(StaticCredentials::new().bearer("alice", "t-alice"));
        let headers = |t: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                "authorization",
                HeaderValue::from_str(&format!("Bearer {t}")).unwrap(),
            );
            h
        };
        let creds_first = crate::auth::AnyOf(vec![creds.clone(), Arc::new(Waits)]);
        let id = |r: Option<Result<Principal, A2aError>>| r.map(|r| r.map(|p| p.id().to_owned()));
        assert_eq!(
            id(creds_first.authenticate_now(&headers("t-alice"))).map(Result::ok),
            Some(Some("token:alice".to_owned()))
        );
        // Refused by the first, and the second must be asked: not known at once.
        assert!(creds_first.authenticate_now(&headers("later")).is_none());
        // A waiting authenticator first decides nothing at once, whatever comes after it.
        let waits_first = crate::auth::AnyOf(vec![Arc::new(Waits), creds]);
        assert!(waits_first.authenticate_now(&headers("t-alice")).is_none());
        // And the gate in front of it still finds each caller.
        let app = routes(Arc::new(waits_first));
        assert_eq!(call(&app, "/a2a/x", Some("t-alice")).await.1, "token:alice");
        assert_eq!(call(&app, "/a2a/x", Some("later")).await.1, "test:later");
        assert_eq!(
            call(&app, "/a2a/x", Some("nope")).await.0,
            StatusCode::UNAUTHORIZED
        );
    }
}
