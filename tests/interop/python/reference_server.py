"""A reference A2A server built on the official Python SDK (a2a-sdk), for interop tests and
side-by-side benchmarks.

    python reference_server.py --port 9999 [--grpc-port 9998]

JSON-RPC at `/` (v1.0 methods with `A2A-Version: 1.0`, v0.3 methods without), HTTP+JSON
(v1.0) under `/rest`, gRPC (v1.0) on `--grpc-port` when given, card at
`/.well-known/agent-card.json`. Behaviour is keyed on the user's text:

    message: ...   a direct Message reply, no task
    echo ...       a completed task with one artifact `echo` holding the text
    multi          WORKING, artifacts a1 "one", a2 "two-" + "part" (appended chunks),
                   a3 "three", COMPLETED
    input          INPUT_REQUIRED "need more"; the follow-up completes with an `echo` artifact
    slow           WORKING, artifact `progress`, 30 s (cancellable: tests cancel it, and
                   their deadlines sit well inside), artifact `result`, COMPLETED
    fail           FAILED with the status message "boom"
    reject         REJECTED with the status message "no thanks"
    (messageId tck-stream-001...)  WORKING, one artifact, COMPLETED (the TCK streaming
                   scenario, for streaming benchmarks)
    anything else  a completed task whose status message is "Hello from TCK" (the same work
                   as `a2a serve --agent conformance`, for benchmarks)
"""

import argparse
import asyncio
import logging

import uvicorn
from starlette.applications import Starlette

from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState


class ReferenceExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        message_id = context.message.message_id if context.message else ''
        if task is None and text.startswith('message:'):
            await event_queue.enqueue_event(new_text_message(text, context_id=context.context_id))
            return
        if task is None:
            # The SDK requires the task itself as the first event of a new task.
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        context_id = task.context_id if task is not None else context.context_id
        updater = TaskUpdater(event_queue, context.task_id, context_id)

        if task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact([new_text_part(text)], name='echo')
            await updater.complete()
        elif message_id.startswith('tck-stream-001'):
            # The TCK streaming scenario, as `a2a serve --agent conformance` runs it.
            await updater.start_work()
            await updater.add_artifact([new_text_part('Stream hello from TCK')])
            await updater.complete()
        elif text.startswith('echo'):
            await updater.add_artifact([new_text_part(text)], name='echo')
            await updater.complete()
        elif text.startswith('multi'):
            await updater.start_work()
            await updater.add_artifact([new_text_part('one')], artifact_id='a1', name='a1')
            await updater.add_artifact([new_text_part('two-')], artifact_id='a2', name='a2')
            await updater.add_artifact([new_text_part('part')], artifact_id='a2', name='a2',
                                       append=True, last_chunk=True)
            await updater.add_artifact([new_text_part('three')], artifact_id='a3', name='a3')
            await updater.complete()
        elif text.startswith('input'):
            await updater.requires_input(updater.new_agent_message([new_text_part('need more')]))
        elif text.startswith('slow'):
            await updater.start_work()
            await updater.add_artifact([new_text_part('progress')], artifact_id='progress',
                                       name='progress')
            await asyncio.sleep(30)
            await updater.add_artifact([new_text_part('result')], artifact_id='result',
                                       name='result')
            await updater.complete()
        elif text.startswith('fail'):
            await updater.failed(updater.new_agent_message([new_text_part('boom')]))
        elif text.startswith('reject'):
            await updater.reject(updater.new_agent_message([new_text_part('no thanks')]))
        else:
            await updater.complete(updater.new_agent_message([new_text_part('Hello from TCK')]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def build_app(port: int, grpc_port: int | None) -> Starlette:
    base = f'http://127.0.0.1:{port}'
    grpc_interfaces = []
    if grpc_port:
        grpc_interfaces.append(AgentInterface(url=f'127.0.0.1:{grpc_port}', protocol_binding='GRPC',
                                              protocol_version='1.0'))
    card = AgentCard(
        name='Python SDK Reference Agent',
        description='Reference agent on the official a2a-sdk, for interop tests',
        version='1.0.0',
        supported_interfaces=[
            AgentInterface(url=f'{base}/', protocol_binding='JSONRPC', protocol_version='1.0'),
            AgentInterface(url=f'{base}/rest', protocol_binding='HTTP+JSON', protocol_version='1.0'),
            *grpc_interfaces,
            AgentInterface(url=f'{base}/', protocol_binding='JSONRPC', protocol_version='0.3'),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id='ref', name='Reference', description='Interop behaviours',
                           tags=['test'], examples=['echo hi', 'multi', 'input', 'slow'])],
    )
    handler = DefaultRequestHandler(agent_executor=ReferenceExecutor(),
                                    task_store=InMemoryTaskStore(), agent_card=card)
    routes = create_agent_card_routes(card)
    routes += create_jsonrpc_routes(handler, rpc_url='/', enable_v0_3_compat=True)
    routes += create_rest_routes(handler, path_prefix='/rest')
    if not grpc_port:
        return Starlette(routes=routes)

    import contextlib

    import grpc
    from a2a.server.request_handlers import GrpcHandler
    from a2a.types import a2a_pb2_grpc

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        # The SDK's gRPC server, in the same event loop and task store as the HTTP bindings.
        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
        server.add_insecure_port(f'127.0.0.1:{grpc_port}')
        await server.start()
        yield
        await server.stop(0)

    return Starlette(routes=routes, lifespan=lifespan)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument('--port', type=int, required=True)
    ap.add_argument('--grpc-port', type=int)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    uvicorn.run(build_app(args.port, args.grpc_port), host='127.0.0.1', port=args.port, log_level='warning',
                access_log=False)


if __name__ == '__main__':
    main()
