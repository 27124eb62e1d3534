import './no-eval.js';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { wardApi } from './api.js';
import { App } from './App.js';
import './styles.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App api={wardApi()} />
  </StrictMode>,
);
