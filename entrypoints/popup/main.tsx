import { render } from 'preact';

function App() {
  return <main><h1>Countersign</h1><p>Locked.</p></main>;
}

render(<App />, document.getElementById('app')!);
