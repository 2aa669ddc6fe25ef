import { isCancellation } from '@temporalio/workflow';
import { TraceSpanType } from '../domain/trace-attributes';
import type { Kernel, TurnAnswer, TurnContext } from './kernel';
import { errorStatus, WorkflowTracer } from './workflow-tracer';

/**
 * SPEC S11.2: runs one turn of a thread in its own span (`invoke_agent <path>`, the GenAI conventions'
 * agent invocation), the parent of the turn's model and tool calls; an approval the turn asks for is an
 * event of the span when it is asked and when it is answered. Untraced workflows run the kernel as is.
 * It returns the kernel's own promise and awaits nothing, so the turn's commands are the same traced or not.
 */
export function tracedTurn(kernel: Kernel, context: TurnContext): Promise<TurnAnswer> {
  const tracer = WorkflowTracer.current();
  if (!tracer) return kernel.runTurn(context);
  const { thread, turn } = context;
  const span = tracer.startSpan(`turn:${thread.id}:${turn}`, `invoke_agent ${thread.path}`, {
    parent: tracer.run.context,
    attributes: {
      'agents_kit.span': TraceSpanType.turn,
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': thread.id,
      'gen_ai.agent.name': thread.name,
      'agents_kit.thread.path': thread.path,
      'agents_kit.turn': turn,
      'agents_kit.inbox.messages': context.inbox.length,
    },
  });
  const ask: TurnContext['ask'] = (request) => {
    span.addEvent('approval-request', {
      'agents_kit.interaction.kind': request.kind,
      ...(request.tool ? { 'gen_ai.tool.name': request.tool.name } : {}),
    });
    const answer = context.ask(request);
    void answer.then(
      (given) =>
        span.addEvent(
          'approval-response',
          given.type === 'approval'
            ? {
                'agents_kit.interaction.kind': request.kind,
                'agents_kit.approval.approved': given.approved,
              }
            : { 'agents_kit.interaction.kind': request.kind },
        ),
      () => undefined,
    );
    return answer;
  };
  // The approval gate (runs with an approval policy) asks through the conversation itself.
  const gate = context.approval;
  const approval = gate && {
    check: (call: Parameters<typeof gate.check>[0]) =>
      gate.check(call, {
        asked: () =>
          span.addEvent('approval-request', {
            'agents_kit.interaction.kind': 'approval',
            'gen_ai.tool.name': call.name,
          }),
        answered: (_, approved) =>
          span.addEvent('approval-response', {
            'agents_kit.interaction.kind': 'approval',
            'agents_kit.approval.approved': approved,
          }),
      }),
  };
  const answer = tracer.within(span, () =>
    kernel.runTurn({ ...context, ask, ...(approval ? { approval } : {}) }),
  );
  return tracer.endWhenSettled(span, answer, {
    value: (given) =>
      span.setAttributes({ 'agents_kit.turn.status': 'completed', 'agents_kit.tokens': given.tokens }),
    error: (error) => {
      if (!isCancellation(error)) {
        span.setAttributes({ 'agents_kit.turn.status': 'failed' });
        return errorStatus(error);
      }
      span.setAttributes({ 'agents_kit.turn.status': 'interrupted' });
      return { code: 'unset' };
    },
  });
}
