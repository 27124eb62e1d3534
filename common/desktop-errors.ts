/**
 * The desktop's wording for errors whose CLI text names a terminal command (issue 31): the
 * window says where to go instead, and an error that ends with one of these places gets a
 * button that opens it.
 */
export const ON_CONNECTIONS = 'on the Connections page';
export const ON_AGENTS = 'on the Agents page';

const PLACES = [
  { page: 'connections', phrase: ON_CONNECTIONS },
  { page: 'agents', phrase: ON_AGENTS },
] as const;

/** The page a desktop error text sends the person to, if any. */
export function placeOfError(text: string): (typeof PLACES)[number]['page'] | null {
  return PLACES.find((place) => text.includes(`${place.phrase}.`))?.page ?? null;
}
