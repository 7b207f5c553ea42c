/**
 * The model catalog answered to `list_models` (protocol.md): the default route and every
 * configured route. Built once by the caller (from configuration) and passed in, so the
 * server does not read configuration itself.
 */
import type { ListModels, ModelsFrame, RouteInfo } from '../../protocol/index.js';

/** What `list_models` answers, without the request id. */
export interface ModelCatalog {
  default: string;
  routes: RouteInfo[];
}

/** A route as the catalog needs it (structurally, config's ModelRoute fits). */
export interface CatalogRoute {
  route: string;
  provider: string;
  model: string;
  context_window: number | null;
  reasoning_efforts?: readonly string[] | undefined;
}

/** The catalog of `routes` (in their order) with `defaultRoute` as default. */
export function modelCatalog(defaultRoute: string, routes: Iterable<CatalogRoute>): ModelCatalog {
  return {
    default: defaultRoute,
    routes: [...routes].map((r) => ({
      route: r.route,
      provider: r.provider,
      model: r.model,
      context_window: r.context_window,
      reasoning_efforts: [...(r.reasoning_efforts ?? [])],
    })),
  };
}

/** The `models` answer to `list_models`, or null for a server started without a catalog. */
export function modelsAnswer(frame: ListModels, catalog: ModelCatalog | undefined): ModelsFrame | null {
  return catalog ? { type: 'models', req_id: frame.req_id, ...catalog } : null;
}
