// The reference brings the storage module's type to every program that compiles this file from
// source (the hosted form's page does); a .d.ts of ambient modules cannot be imported.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./types/class-transformer-storage.d.ts" />
// The DTO rules compiled once per class. class-validator and class-transformer look their metadata up
// again on every call (filtering every class's rules, walking prototypes, sorting by property); on a
// hot path that reflection cost more than the rules themselves. Here the same metadata is read once
// per class into a plan, and a valid input is built and checked with plain loops. Only the answer
// "valid, and this is the instance" is taken from the plan: an invalid input, or one the plan does not
// model, goes to the libraries themselves, which also word the errors. So the decorators stay the one
// source of the rules, and compiled-dto.spec.ts checks that both paths accept the same inputs and
// build the same instances.
import 'reflect-metadata';
import { TransformationType, type ClassConstructor } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';
import { TRANSFORM_OPTIONS } from './validate.js';

/** What class-transformer's storage holds (its package types the storage only under `types/`). */
interface TransformerStorage {
  findTransformMetadatas(
    target: object,
    property: string,
    type: TransformationType,
  ): {
    transformFn: (params: object) => unknown;
    options?: { groups?: string[]; since?: number; until?: number };
  }[];
  findTypeMetadata(
    target: object,
    property: string,
  ):
    | {
        typeFunction?: (options?: object) => unknown;
        reflectedType?: unknown;
        options?: { discriminator?: unknown };
      }
    | undefined;
  findExposeMetadata(target: object, property: string): { options?: object } | undefined;
  getExposedProperties(target: object, type: TransformationType): string[];
  getExcludedProperties(target: object, type: TransformationType): string[];
  getStrategy(target: object): string;
  getAncestors(target: object): object[];
  _transformMetadatas: Map<object, Map<string, unknown>>;
  _typeMetadatas: Map<object, Map<string, unknown>>;
}

interface ValidationMetadata {
  type: string;
  target: object | string;
  propertyName: string;
  constraintCls: object;
  constraints: unknown[];
  each?: boolean;
  validateIf?: (object: object, value: unknown) => boolean;
}

interface Constraint {
  async: boolean;
  instance: { validate(value: unknown, args: ValidationArguments): unknown };
}

interface ValidatorStorage {
  getTargetValidationMetadatas(
    target: object,
    schema: string,
    always: boolean,
    strictGroups: boolean,
    groups?: string[],
  ): ValidationMetadata[];
  getTargetValidatorConstraints(target: object): Constraint[];
  validationMetadatas: Map<object | string, ValidationMetadata[]>;
}

const transformerStorage = defaultMetadataStorage as TransformerStorage;
/** class-transformer's metadata (the OpenAPI generator reads `@Type` from it too). */
export const classTransformerMetadataStorage: unknown = defaultMetadataStorage;
const validatorStorage = getMetadataStorage() as unknown as ValidatorStorage;
/** The options a `@Transform` function is handed, as plainToInstance merges them (made on first use: validate.ts imports this module). */
let transformParamsOptions: object | undefined;
const transformOptions = () =>
  (transformParamsOptions ??= {
    enableCircularCheck: false,
    excludeExtraneousValues: false,
    exposeDefaultValues: false,
    exposeUnsetFields: true,
    ignoreDecorators: false,
    ...TRANSFORM_OPTIONS,
  });

/** Thrown inside the fast path: the input is invalid or outside the plan; the libraries decide. */
class NotFast extends Error {}
// One instance, made once: the refusal path does not pay for a stack trace each time.
const NOT_FAST = new NotFast('not on the fast path');

interface PropertyTransform {
  transforms: ((params: object) => unknown)[];
  type?: (options?: object) => unknown;
  /** The property's declared type, for an array value (class-transformer builds that kind of list). */
  arrayType?: unknown;
}

interface CustomRule {
  metadata: ValidationMetadata;
  constraints: Constraint[];
}

interface PropertyRules {
  conditions: ((object: object, value: unknown) => boolean)[];
  /** `IsDefined` first, then the other rules, as class-validator runs them. */
  rules: CustomRule[];
  nested: number;
}

interface ClassPlan {
  cls: ClassConstructor<object>;
  exposed: string[];
  excluded: Set<string>;
  transforms: Map<string, PropertyTransform>;
  properties: Map<string, PropertyRules>;
}

const plans = new Map<unknown, ClassPlan | null>();

/** The plan of a class, built on first use; null when the class uses something the plan does not model. */
function planOf(cls: unknown): ClassPlan | null {
  let plan = plans.get(cls);
  if (plan === undefined) {
    plan = typeof cls === 'function' ? buildPlan(cls as ClassConstructor<object>) : null;
    plans.set(cls, plan);
  }
  return plan;
}

function buildPlan(cls: ClassConstructor<object>): ClassPlan | null {
  if ([...validatorStorage.validationMetadatas.keys()].some((key) => typeof key === 'string')) return null;
  const metadatas = validatorStorage.getTargetValidationMetadatas(cls, '', false, false, undefined);
  if (metadatas.length === 0) return null; // forbidUnknownValues refuses it: let the libraries say so
  if (transformerStorage.getStrategy(cls) !== 'none') return null;

  const properties = new Map<string, PropertyRules>();
  for (const metadata of metadatas) {
    let rules = properties.get(metadata.propertyName);
    if (!rules) properties.set(metadata.propertyName, (rules = { conditions: [], rules: [], nested: 0 }));
    switch (metadata.type) {
      case ValidationTypes.CONDITIONAL_VALIDATION:
        rules.conditions.push(metadata.constraints[0] as PropertyRules['conditions'][number]);
        break;
      case ValidationTypes.IS_DEFINED:
      case ValidationTypes.CUSTOM_VALIDATION: {
        const constraints = validatorStorage.getTargetValidatorConstraints(metadata.constraintCls);
        if (constraints.some((constraint) => constraint.async)) return null;
        const rule = { metadata, constraints };
        if (metadata.type === ValidationTypes.IS_DEFINED) rules.rules.unshift(rule);
        else rules.rules.push(rule);
        break;
      }
      case ValidationTypes.NESTED_VALIDATION:
        rules.nested += 1;
        break;
      case ValidationTypes.WHITELIST:
        break;
      default:
        return null; // promise validation, or a kind this plan does not know
    }
  }

  const exposed = transformerStorage.getExposedProperties(cls, TransformationType.PLAIN_TO_CLASS);
  if (exposed.some((key) => hasOptions(transformerStorage.findExposeMetadata(cls, key)))) return null;
  const transforms = new Map<string, PropertyTransform>();
  for (const key of transformedProperties(cls)) {
    const found = transformerStorage.findTransformMetadatas(cls, key, TransformationType.PLAIN_TO_CLASS);
    if (
      found.some(({ options }) => options?.groups?.length || options?.since != null || options?.until != null)
    )
      return null;
    const type = transformerStorage.findTypeMetadata(cls, key);
    if (type && (type.options?.discriminator || !type.typeFunction)) return null;
    if (type && (type.reflectedType === Map || type.reflectedType === Set)) return null;
    transforms.set(key, {
      transforms: found.map((metadata) => metadata.transformFn),
      type: type?.typeFunction,
      arrayType: type?.reflectedType,
    });
  }
  return {
    cls,
    exposed,
    excluded: new Set(transformerStorage.getExcludedProperties(cls, TransformationType.PLAIN_TO_CLASS)),
    transforms,
    properties,
  };
}

function hasOptions(metadata: { options?: object } | undefined): boolean {
  return metadata?.options !== undefined && Object.keys(metadata.options).length > 0;
}

/** Properties of the class (or its ancestors) with a `@Transform` or `@Type`. */
function transformedProperties(cls: object): Set<string> {
  const keys = new Set<string>();
  for (const target of [cls, ...transformerStorage.getAncestors(cls)]) {
    for (const key of transformerStorage._transformMetadatas.get(target)?.keys() ?? []) keys.add(key);
    for (const key of transformerStorage._typeMetadatas.get(target)?.keys() ?? []) keys.add(key);
  }
  return keys;
}

// ---- building the instance (class-transformer's plainToInstance, for JSON input) ----

function instanceOf(plan: ClassPlan, plain: Record<string, unknown>): Record<string, unknown> {
  // Exposed properties are read even when not sent (most DTOs have none: no merged list to build).
  const keys = plan.exposed.length
    ? [...new Set([...Object.keys(plain), ...plan.exposed])]
    : Object.keys(plain);
  const instance = new plan.cls() as Record<string, unknown>;
  for (const key of keys) {
    if (key === '__proto__' || key === 'constructor') throw NOT_FAST;
    if (plan.excluded.has(key) || skipsKey(plan.cls.prototype as object, instance, key)) continue;
    const transform = plan.transforms.get(key);
    const type = transform?.type?.({ newObject: instance, object: plain, property: key });
    let value = converted(plain[key], type, transform?.arrayType);
    for (const transformFn of transform?.transforms ?? []) {
      value = transformFn({
        value,
        key,
        obj: plain,
        type: TransformationType.PLAIN_TO_CLASS,
        options: transformOptions(),
      });
    }
    instance[key] = value;
  }
  return instance;
}

/** class-transformer leaves out keys naming a method or a getter of the target. */
function skipsKey(prototype: object, target: Record<string, unknown>, key: string): boolean {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
  return (descriptor !== undefined && !descriptor.set) || target[key] instanceof Function;
}

function converted(value: unknown, type: unknown, arrayType?: unknown): unknown {
  if (Array.isArray(value)) {
    const list = arrayType === undefined ? [] : new (arrayType as new () => unknown[])();
    if (!Array.isArray(list)) throw NOT_FAST;
    for (const item of value) list.push(converted(item, type));
    return list;
  }
  if (type === String || type === Number || type === Boolean || type === Date || type === Buffer) {
    throw NOT_FAST; // conversions no DTO of ours asks for
  }
  if (typeof value !== 'object' || value === null) return value;
  if (type === undefined || type === Object) {
    if (Object.getPrototypeOf(value) !== Object.prototype || Object.hasOwn(value, 'constructor'))
      throw NOT_FAST;
    return plainCopy(value as Record<string, unknown>);
  }
  const plan = planOf(type);
  if (!plan) throw NOT_FAST;
  return instanceOf(plan, value as Record<string, unknown>);
}

function plainCopy(plain: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(plain)) {
    if (key === '__proto__') throw NOT_FAST;
    if (skipsKey(Object.prototype, copy, key)) continue;
    copy[key] = converted(plain[key], undefined);
  }
  return copy;
}

// ---- checking it (class-validator's rules, with the platform's validator options) ----

function check(object: Record<string, unknown>): void {
  const plan = planOf(object.constructor);
  if (!plan) throw NOT_FAST;
  // whitelist: what no rule names is removed, not refused
  for (const key of Object.keys(object)) if (!plan.properties.has(key)) delete object[key];
  for (const [property, rules] of plan.properties) {
    const value = object[property];
    if (!rules.conditions.every((condition) => condition(object, value))) continue;
    for (const rule of rules.rules) checkRule(rule, object, value);
    for (let i = 0; i < rules.nested && value !== undefined; i++) checkNested(value);
  }
}

function checkRule({ metadata, constraints }: CustomRule, object: object, value: unknown): void {
  if (metadata.validateIf && !metadata.validateIf(object, value)) return;
  const args: ValidationArguments = {
    targetName: object.constructor.name,
    property: metadata.propertyName,
    object,
    value,
    constraints: metadata.constraints,
  };
  if (metadata.each && (value instanceof Set || value instanceof Map)) throw NOT_FAST; // never from JSON
  const items = metadata.each && Array.isArray(value) ? (value as unknown[]) : [value];
  for (const constraint of constraints) {
    for (const item of items) {
      const valid = constraint.instance.validate(item, args);
      if (!valid || typeof (valid as { then?: unknown }).then === 'function') throw NOT_FAST;
    }
  }
}

function checkNested(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) if (item !== undefined) checkNested(item);
  } else if (value instanceof Object) {
    check(value as Record<string, unknown>);
  } else {
    throw NOT_FAST;
  }
}

/**
 * The instance of `cls` for a JSON object that passes every rule of the class, built and checked
 * with the compiled plan; `undefined` when the input is invalid or is something the plan does not
 * model (the caller then asks class-transformer and class-validator, which also name the errors).
 */
export function validInstance<T extends object>(cls: ClassConstructor<T>, plain: unknown): T | undefined {
  const plan = planOf(cls);
  if (!plan || typeof plain !== 'object' || plain === null || Array.isArray(plain)) return undefined;
  try {
    const instance = instanceOf(plan, plain as Record<string, unknown>);
    check(instance);
    return instance as T;
  } catch (error) {
    if (error === NOT_FAST) return undefined;
    throw error;
  }
}

/** Whether `cls` has a compiled plan (a DTO of rules the plan models). */
export function hasCompiledPlan(cls: unknown): boolean {
  return planOf(cls) !== null;
}
