//! The layer that authenticates each request to an agent's HTTP+JSON routes before its
//! body is read; the principal goes into the request's extensions. (The JSON-RPC endpoint
//! authenticates in its handler, [`super::admit`]: one route, with no layer around it.)
//!
//! A request whose answer the authenticator knows at once (configured tokens and keys, a JWT
//! verified before: [`Authenticator::authenticate_now`]) goes to the route in the same call,
//! with no future, boxed service or clone of the route of its own; only one that waits (a
//! JWT whose keys are being fetched) takes the route along into a future of its own.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use a2a_types::A2aError;
use axum::extract::Request;
use axum::response::Response;
use futures::future::{BoxFuture, Either};

use super::{Authenticator, refuse};

/// What the layer needs: the authenticator.
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    pub(crate) auth: Arc<dyn Authenticator>,
}

impl Gate {
    /// The 401 answer, in the HTTP+JSON binding's shape.
    fn refuse(&self, e: &A2aError) -> Response {
        refuse(&*self.auth, e, false)
    }
}

/// Authenticates every request to the routes it wraps.
#[derive(Debug, Clone)]
pub(crate) struct GateLayer(pub(crate) Arc<Gate>);

impl<S> tower::Layer<S> for GateLayer {
    type Service = Gated<S>;

    fn layer(&self, inner: S) -> Gated<S> {
        Gated {
            inner,
            gate: self.0.clone(),
        }
    }
}

/// A route behind the gate.
#[derive(Debug, Clone)]
pub(crate) struct Gated<S> {
    inner: S,
    gate: Arc<Gate>,
}

impl<S> tower::Service<Request> for Gated<S>
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        match self.gate.auth.authenticate_now(request.headers()) {
            Some(Ok(principal)) => {
                request.extensions_mut().insert(principal);
                Either::Left(self.inner.call(request))
            }
            Some(Err(e)) => {
                let refusal = self.gate.refuse(&e);
                Either::Right(Box::pin(std::future::ready(Ok(refusal))))
            }
            None => {
                // The service made ready goes with the request; a clone stays for the next.
                let ready = self.inner.clone();
                let mut inner = std::mem::replace(&mut self.inner, ready);
                let gate = self.gate.clone();
                Either::Right(Box::pin(async move {
                    match gate.auth.authenticate(request.headers()).await {
                        Ok(principal) => {
                            request.extensions_mut().insert(principal);
                            inner.call(request).await
                        }
                        Err(e) => Ok(gate.refuse(&e)),
                    }
                }))
            }
        }
    }
}
