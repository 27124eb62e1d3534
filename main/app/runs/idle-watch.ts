/**
 * Stops a turn whose CLI has said nothing for too long while nothing ran on its behalf (issue 12
 * #13): a provider that accepts the request and then hangs would otherwise hold the turn, silent,
 * until the turn timeout. A running tool or an open question keeps the turn alive: those have
 * their own bounds.
 */
export class IdleWatch {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly idleMs: number,
    /** True while a tool runs or a question waits: silence then is expected. */
    private readonly busy: () => boolean,
    private readonly onIdle: (reason: string) => void,
  ) {}

  /** The CLI said something (or the turn started): the silence starts again from now. */
  touch(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.busy()) this.touch();
      else this.onIdle(`the CLI sent nothing for ${describeDuration(this.idleMs)} while no tool ran (the model provider may be hanging; idleTimeoutMinutes in settings.json sets this bound)`);
    }, this.idleMs);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

function describeDuration(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}
