// The demo's speech card: a file, or a recording from the microphone (MediaRecorder's webm/opus),
// posted to /v1/audio/transcriptions through the page's unmodified openai SDK and answered in this
// tab; the transcript is shown with its segments' times.
import type OpenAI from 'openai';

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

const clock = (s: number) => `${Math.floor(s / 60)}:${(s % 60).toFixed(2).padStart(5, '0')}`;

export function speechCard(client: OpenAI, model: string | undefined): void {
  const note = $('speech-note');
  if (!model) {
    const url = new URL(location.href);
    url.searchParams.set('models', 'svc/tiny-chat,svc/tiny-embed,svc/tiny-whisper');
    note.innerHTML = `No speech-to-text model is served in this tab. <a href="${url.href}">Serve svc/tiny-whisper too</a>.`;
    return;
  }
  note.textContent = `${model}: pick a file or record; the audio never leaves this tab.`;
  const file = $<HTMLInputElement>('audio-file');
  const record = $<HTMLButtonElement>('record');
  file.disabled = false;
  record.disabled = !navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === 'undefined';
  file.addEventListener('change', () => {
    const f = file.files?.[0];
    if (f) void transcribe(client, model, f);
    file.value = '';
  });
  let recorder: MediaRecorder | undefined;
  record.addEventListener('click', async () => {
    if (recorder) return void recorder.stop();
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    const parts: Blob[] = [];
    recorder = new MediaRecorder(stream);
    recorder.ondataavailable = (e) => parts.push(e.data);
    recorder.onstop = () => {
      for (const t of stream.getTracks()) t.stop();
      const type = recorder!.mimeType || 'audio/webm';
      recorder = undefined;
      record.textContent = 'Record';
      void transcribe(client, model, new File(parts, 'recording.webm', { type }));
    };
    recorder.start();
    record.textContent = 'Stop';
  });
}

async function transcribe(client: OpenAI, model: string, file: File): Promise<void> {
  const out = $('transcript');
  const stats = $('speech-stats');
  out.replaceChildren();
  stats.textContent = 'transcribing…';
  const t0 = performance.now();
  try {
    const r = await client.audio.transcriptions.create({ file, model, response_format: 'verbose_json', timestamp_granularities: ['segment'] });
    for (const s of r.segments ?? []) {
      const row = document.createElement('div');
      const time = document.createElement('span');
      time.className = 'muted small';
      time.textContent = `${clock(s.start)}–${clock(s.end)} `;
      row.append(time, s.text.trim());
      out.append(row);
    }
    const secs = (performance.now() - t0) / 1000;
    stats.textContent = `${r.duration.toFixed(1)} s of ${r.language} in ${secs.toFixed(2)} s (${(r.duration / secs).toFixed(1)}× real time)`;
  } catch (e) {
    stats.textContent = e instanceof Error ? e.message : String(e);
  }
}
