/**
 * The desktop's one wording for "no usable model key": main sends it for `model_key_missing`
 * (the CLI's text names a terminal command), and the window shows it with a button that opens
 * the setup card instead.
 */
export const MODEL_SETUP_NEEDED = 'Ward has no usable model key for this namespace yet.';
