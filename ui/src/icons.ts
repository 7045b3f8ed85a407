// Icons come from one well-kept set (lucide-react), at one size, always beside a word that names
// the thing (an icon alone is never the only label) and hidden from screen readers.
export const ICON_SIZE = 16;
