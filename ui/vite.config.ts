import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

// Tauri loads the built files from ui/dist; in `tauri dev` it uses this dev server.
export default defineConfig({
  plugins: [react()],
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { target: "safari15", outDir: "dist", emptyOutDir: true },
  // styles.css is read as text by its contrast test (Vitest empties CSS files unless told).
  test: { environment: "jsdom", css: { include: [/styles\.css/] } },
});
