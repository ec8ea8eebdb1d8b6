import { hearth } from 'hearth/vite';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [hearth()],
});
