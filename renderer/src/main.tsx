import './no-eval.js';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { wardApi } from './api.js';
import { App } from './App.js';
import { ReviewWindow, reviewIdOf } from './components/ReviewView.js';
import './styles.css';

// A review window (opened by main for one bundle) shows that bundle and nothing else.
const reviewId = reviewIdOf(location.hash);

createRoot(document.getElementById('root')!).render(<StrictMode>{reviewId === null ? <App api={wardApi()} /> : <ReviewWindow api={wardApi()} reviewId={reviewId} />}</StrictMode>);
