// The bench worker's workflowsPath: every agents-kit workflow plus the bench primitives, one bundle.
export * from '../workflows';
export * from './workflows';
export * from './step-workflows';
