//! What a connection serves: the server's application (a tower service of axum requests),
//! called in place for each request.
//!
//! hyper calls a service by `&self`, tower by `&mut self`. hyper-util's `TowerToHyperService`
//! bridges the two by cloning the application for every request and driving the clone
//! through `Oneshot`; the application was an axum `Router` whose only route was the server's
//! service, so every request also went through that router's fallback, a boxed service
//! cloned per request. Each connection here owns its copy of the application and calls it
//! through a `RefCell`: hyper calls a connection's service from that connection's task
//! only, and the future a call returns does not borrow the service.

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

/// hyper-util's automatic protocol detection (TLS without ALPN) takes a service it can
/// copy; the copy is another connection's, with its own cell.
impl<S: Clone> Clone for ConnectionService<S> {
    fn clone(&self) -> Self {
        Self::new(self.app.borrow().clone(), self.peer, self.secure)
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
        // A formality of tower's contract: every `App` is always ready.
        let ready = app.poll_ready(&mut Context::from_waker(Waker::noop()));
        debug_assert!(ready.is_ready(), "an App that was not ready");
        app.call(req)
            .map_ok(IntoResponse::into_response as IntoResponseFn<S::Response>)
    }
}
