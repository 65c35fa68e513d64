import { Type, type Static } from '@sinclair/typebox';

/** metav1.Condition, the shape every condition on our own kinds (and CAPI v1beta2 kinds) has. */
export const ConditionSchema = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 316, description: 'type of the condition, in PascalCase.' }),
    status: Type.Unsafe<'True' | 'False' | 'Unknown'>({ type: 'string', enum: ['True', 'False', 'Unknown'] }),
    reason: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'reason for the last transition, in PascalCase; stable, alert on it.',
    }),
    message: Type.String({ maxLength: 32768, description: 'human-readable detail.' }),
    lastTransitionTime: Type.String({ format: 'date-time', description: 'when status last changed.' }),
    observedGeneration: Type.Optional(Type.Integer({ minimum: 0, format: 'int64' })),
  },
  { description: 'A condition in the metav1.Condition format.' },
);
export type Condition = Static<typeof ConditionSchema>;
export type ConditionStatus = Condition['status'];

/** How conditions lists are declared: a list-map keyed by type, as the API conventions ask. */
export const ConditionsSchema = Type.Array(ConditionSchema, {
  maxItems: 32,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});
