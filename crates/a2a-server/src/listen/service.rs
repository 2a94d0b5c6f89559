//! What a connection serves: the server's application (a tower service of axum requests),
//! called in place for each request.
//!
//! hyper calls a service by `&self`, tower by `&mut self`. Each connection owns its copy of
//! the application and calls it through a `RefCell`: `ConnectionService` is not `Sync`, and
//! the borrow ends with the synchronous `call` (the future it returns does not borrow the
//! service), so no borrow can meet another. That call runs in the connection's own poll
//! (for HTTP/2, not inside a stream's), where a panic would end the connection: it does
//! nothing that can, but for the readiness assertion. A handler's panic is caught further
//! in, by the application's panic guard.

use std::cell::RefCell;
use std::convert::Infallible;
use std::task::{Context, Waker};

use axum::body::Body;
use axum::http::{HeaderValue, Request};
use axum::response::{IntoResponse, Response};
use futures::TryFutureExt;
use futures::future::MapOk;
use hyper::body::Incoming;
use tower::Service;

use crate::limits::PeerAddr;

/// An application a server serves: any tower service of axum requests that never fails and
/// is always ready (axum's router, tower-http's layers, axum's `from_fn` middleware are).
/// Readiness is a contract the trait cannot state: hyper has no place to wait for it, and a
/// layer that can be not ready (a concurrency limit, a buffer) would fail the assertion in
/// `ConnectionService::call`.
pub(crate) trait App:
    Service<Request<Body>, Error = Infallible, Response: IntoResponse, Future: Send + 'static>
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> App for S where
    S: Service<Request<Body>, Error = Infallible, Response: IntoResponse, Future: Send + 'static>
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// `app` as the hyper service of one connection: each request carries the connection's
/// [`PeerAddr`], and, over TLS, `x-forwarded-proto: https` (cards name the scheme clients
/// used; over TLS it is https, whatever a client claims).
pub(super) struct ConnectionService<S> {
    app: RefCell<S>,
    peer: std::net::SocketAddr,
    secure: bool,
}

impl<S> ConnectionService<S> {
    pub(super) fn new(app: S, peer: std::net::SocketAddr, secure: bool) -> Self {
        Self {
            app: RefCell::new(app),
            peer,
            secure,
        }
    }
}

type IntoResponseFn<R> = fn(R) -> Response;

impl<S: App> hyper::service::Service<Request<Incoming>> for ConnectionService<S> {
    type Response = Response;
    type Error = Infallible;
    type Future = MapOk<S::Future, IntoResponseFn<S::Response>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let mut req = req.map(Body::new);
        req.extensions_mut().insert(PeerAddr(self.peer));
        if self.secure {
            req.headers_mut()
                .insert("x-forwarded-proto", HeaderValue::from_static("https"));
        }
        let mut app = self.app.borrow_mut();
        // Tower's contract; every `App` is always ready (see there).
        let ready = app.poll_ready(&mut Context::from_waker(Waker::noop()));
        assert!(ready.is_ready(), "the server's application was not ready");
        app.call(req)
            .map_ok(IntoResponse::into_response as IntoResponseFn<S::Response>)
    }
}
