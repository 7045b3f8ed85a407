import js from "@eslint/js";
import globals from "globals";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist"] },
  {
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    files: ["**/*.{ts,tsx}"],
    languageOptions: { globals: globals.browser },
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      // Components reach the backend only through src/ipc.ts.
      "no-restricted-imports": [
        "error",
        { paths: [{ name: "@tauri-apps/api/core", message: "Use src/ipc.ts." }] },
      ],
    },
  },
  {
    files: ["src/ipc.ts", "src/generated/commands.ts", "src/**/*.test.ts", "src/**/*.test.tsx"],
    rules: { "no-restricted-imports": "off" },
  },
);
