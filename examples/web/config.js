// Where Gatehouse is and which project and API key this app uses. `emulator: true` for
// `make dev` (http://127.0.0.1:8080), false for a production Gatehouse over https.
export default {
  gatehouse: 'http://127.0.0.1:8080',
  emulator: true,
  firebase: { apiKey: 'example-key', projectId: 'demo-gatehouse', authDomain: '127.0.0.1' },
};
